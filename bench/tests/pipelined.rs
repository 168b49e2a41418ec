//! `--only pipelined`'s pure parts: the order servers take turns in (`benches/rpc/rotation.rs`)
//! and reading perf's system-call count (`benches/rpc/syscalls.rs`).

#[allow(dead_code)]
#[path = "../benches/rpc/rotation.rs"]
mod rotation;
#[allow(dead_code)]
#[path = "../benches/rpc/syscalls.rs"]
mod syscalls;

use syscalls::{parse_count, EVENT};

#[test]
fn every_round_runs_each_server_once_and_each_server_leads_once_in_n_rounds() {
    let n = 5;
    let mut leaders = Vec::new();
    for round in 0..n {
        let order = rotation::order(round, n);
        let mut sorted = order.clone();
        sorted.sort();
        assert_eq!(
            sorted,
            (0..n).collect::<Vec<_>>(),
            "round {round}: {order:?}"
        );
        leaders.push(order[0]);
    }
    leaders.sort();
    assert_eq!(leaders, (0..n).collect::<Vec<_>>());
    // Each server moves one place ahead per round, and the rotation repeats after n rounds.
    assert_eq!(rotation::order(1, 3), [1, 2, 0]);
    assert_eq!(rotation::order(2, 3), [2, 0, 1]);
    assert_eq!(rotation::order(3, 3), rotation::order(0, 3));
}

#[test]
fn reads_the_count_among_perfs_other_lines() {
    // What `perf stat -x, --delay=-1 --control ...` prints on stderr, SIGINT included.
    let out = "Events disabled\nEvents enabled\nEvents disabled\n\
               2217301,,raw_syscalls:sys_enter,458141768,100.00,,\n";
    assert_eq!(parse_count(out, EVENT), Ok(2_217_301));
    // Another event's line is not this one's count.
    let other = "12,,raw_syscalls:sys_exit,1000,100.00,,\n";
    assert!(parse_count(other, EVENT).is_err());
}

#[test]
fn says_why_there_is_no_count() {
    let not_counted = "<not counted>,,raw_syscalls:sys_enter,0,0.00,,\n";
    let e = parse_count(not_counted, EVENT).unwrap_err();
    assert!(e.contains("counted no"), "{e}");
    let unsupported = "<not supported>,,raw_syscalls:sys_enter,0,100.00,,\n";
    let e = parse_count(unsupported, EVENT).unwrap_err();
    assert!(e.contains("not supported"), "{e}");
    let failed = "event syntax error: 'raw_syscalls:sys_enter'\nRun 'perf list' for a list of valid events\n";
    let e = parse_count(failed, EVENT).unwrap_err();
    assert!(e.contains("perf list"), "{e}");
    assert!(parse_count("", EVENT)
        .unwrap_err()
        .contains("printed nothing"));
}
