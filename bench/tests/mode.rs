//! The benchmark's modes (`benches/rpc/mode.rs`): the names `--only` matches, and the floor
//! and neighbour modes' gaps.

#[allow(dead_code)]
#[path = "../benches/rpc/mode.rs"]
mod mode;

use std::time::Duration;

use mode::Mode;

#[test]
fn floor_modes_are_the_polling_gaps_with_the_gap_modes_counts() {
    let floor = mode::floor(false, None);
    let names: Vec<String> = floor.iter().map(Mode::name).collect();
    assert_eq!(
        names,
        [
            "poll gap 0",
            "poll gap 50us",
            "poll gap 200us",
            "poll gap 500us"
        ]
    );
    for (m, us) in floor.iter().zip(mode::FLOOR_GAPS_US) {
        assert!(matches!(m, Mode::PollGap { .. }), "{m:?}");
        assert_eq!(m.gap(), Some(Duration::from_micros(us)));
        assert_eq!(m.client_threads(), 1);
        assert!(!m.is_closed_loop_throughput() && !m.is_poisson());
        let (Mode::PollGap { count, .. }, Mode::Gap { count: want, .. }) =
            (*m, mode::gap(us, false, None))
        else {
            panic!("{m:?}");
        };
        assert_eq!(count, want);
        assert!(m.estimate() >= Duration::from_micros(us) * count as u32);
    }
    let budget = Some(Duration::from_secs(2));
    let longer = mode::floor(false, budget);
    assert!(longer[0].estimate() > floor[0].estimate());
    assert!(mode::floor(true, None)[0].estimate() < floor[0].estimate());
}

#[test]
fn polling_modes_are_not_picked_by_the_other_modes_names() {
    // `--only "gap 50us"` matches names containing it: it must not pull in `poll gap 50us`,
    // which needs the floor plan, so the regular modes have no polling mode among them.
    let regular: Vec<String> = mode::main(false, None)
        .iter()
        .chain(&mode::poisson(false))
        .map(Mode::name)
        .collect();
    assert!(regular.iter().all(|n| !n.contains("poll")), "{regular:?}");
    assert!(regular.contains(&"gap 50us".to_string()));
}

#[test]
fn only_names_a_mode_by_its_whole_name_ignoring_case_and_blanks() {
    let only = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(mode::named(&only(&["floor"]), "floor"));
    assert!(mode::named(&only(&["sweep", " Floor "]), "floor"));
    assert!(!mode::named(&only(&["floors"]), "floor"));
    assert!(!mode::named(&only(&["flo"]), "floor"));
    assert!(!mode::named(&only(&[]), "floor"));
}

#[test]
fn durations_are_named_in_the_largest_whole_unit() {
    assert_eq!(mode::fmt_dur(Duration::ZERO), "0");
    assert_eq!(mode::fmt_dur(Duration::from_micros(50)), "50us");
    assert_eq!(mode::fmt_dur(Duration::from_micros(1500)), "1500us");
    assert_eq!(mode::fmt_dur(Duration::from_millis(2)), "2ms");
}

#[test]
fn neighbour_modes_are_gap_modes_named_only_by_their_whole_name() {
    let modes = mode::neighbour(false, None);
    let names: Vec<String> = modes.iter().map(Mode::name).collect();
    assert_eq!(names, ["gap 50us", "gap 200us", "gap 1ms"]);
    for (m, us) in modes.iter().zip(mode::NEIGHBOUR_GAPS_US) {
        let (Mode::Gap { gap, count }, Mode::Gap { count: want, .. }) =
            (*m, mode::gap(us, false, None))
        else {
            panic!("{m:?}");
        };
        assert_eq!(gap, Duration::from_micros(us));
        assert_eq!(count, want);
    }
    let budget = Some(Duration::from_secs(2));
    assert!(mode::neighbour(false, budget)[0].estimate() > modes[0].estimate());
    assert!(mode::neighbour(true, None)[0].estimate() < modes[0].estimate());
    // `--only neighbour` names the plan, and pulls in none of the regular modes by substring.
    let only = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
    assert!(mode::named(&only(&["floor", " Neighbour "]), "neighbour"));
    assert!(!mode::named(&only(&["neighbours"]), "neighbour"));
    let regular: Vec<String> = mode::main(false, None)
        .iter()
        .chain(&mode::poisson(false))
        .map(Mode::name)
        .collect();
    assert!(
        regular.iter().all(|n| !n.contains("neighbour")),
        "{regular:?}"
    );
}
