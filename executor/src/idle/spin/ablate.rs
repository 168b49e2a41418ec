//! Switches that turn one part of the adaptive policy off, for the ablation matrix: does any
//! layout need this part? (`cargo bench --bench rpc -- --only policy --ablate PART,...`, and
//! the table in `docs/design.md`.)
//!
//! ```text
//! SPINPARK_SPIN_ABLATE=contend,colocated ./server   # with the `spin-ablation` feature
//! ```
//!
//! Compiled in only with the `spin-ablation` feature, which only the benchmark harness turns
//! on; without it [`off`] is a constant `false` and every check folds away. With it, the
//! variable is read once per process, and an unknown name is an error at the first check
//! (a panic: an ablation that silently turned nothing off would measure nothing).

/// A part of the adaptive policy that can be switched off; see each for what "off" means.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[allow(dead_code)] // Only named when the feature is on.
pub(super) enum Part {
    /// The window stays at its initial length (no growing, shrinking or pay-for-itself drop).
    Window,
    /// Spinning never has to pay for itself (no drop to the minimum, no growth hold).
    Pay,
    /// The CPU budget never denies a spin.
    Budget,
    /// The probes never run and the mode never leaves spinning.
    Mode,
    /// The sequential test decides on one probe: a cheaper probe flips, any other confirms.
    Sprt,
    /// The probe rate is fixed (one run per [`FIXED_EVERY`] periods), neither faster on
    /// evidence nor slower on confirmations.
    Schedule,
    /// The lost-core hold (`contend.rs`) never holds.
    Contend,
    /// The clients-on-our-CPUs charge (`Driver::clients_colocated`) is ignored.
    Colocated,
    /// Park probes run at any moment, busy or not (no quiet-moment rule).
    Quiet,
}

impl Part {
    #[cfg(feature = "spin-ablation")]
    const ALL: [(Part, &'static str); 9] = [
        (Part::Window, "window"),
        (Part::Pay, "pay"),
        (Part::Budget, "budget"),
        (Part::Mode, "mode"),
        (Part::Sprt, "sprt"),
        (Part::Schedule, "schedule"),
        (Part::Contend, "contend"),
        (Part::Colocated, "colocated"),
        (Part::Quiet, "quiet"),
    ];
}

/// The probe rate with [`Part::Schedule`] off: between the fastest (8) and the slowest (1024).
pub(super) const FIXED_EVERY: u32 = 128;

/// Whether `part` is switched off in this process.
#[inline]
pub(super) fn off(part: Part) -> bool {
    #[cfg(feature = "spin-ablation")]
    {
        mask() & (1 << part as u32) != 0
    }
    #[cfg(not(feature = "spin-ablation"))]
    {
        let _ = part;
        false
    }
}

#[cfg(feature = "spin-ablation")]
fn mask() -> u32 {
    static MASK: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MASK.get_or_init(|| {
        let names = std::env::var("SPINPARK_SPIN_ABLATE").unwrap_or_default();
        parse(&names).unwrap_or_else(|bad| panic!("SPINPARK_SPIN_ABLATE: no part {bad:?}"))
    })
}

/// The parts a comma-separated list names, as a mask; `Err` names the first unknown one.
#[cfg(feature = "spin-ablation")]
fn parse(names: &str) -> Result<u32, String> {
    let mut mask = 0;
    for name in names.split(',').map(str::trim).filter(|n| !n.is_empty()) {
        let (part, _) = Part::ALL
            .iter()
            .find(|(_, n)| n.eq_ignore_ascii_case(name))
            .ok_or_else(|| name.to_string())?;
        mask |= 1 << *part as u32;
    }
    Ok(mask)
}

#[cfg(all(test, feature = "spin-ablation"))]
mod tests {
    use super::*;

    #[test]
    fn names_parse_to_their_parts_and_unknown_ones_are_refused() {
        assert_eq!(parse(""), Ok(0));
        assert_eq!(
            parse("mode, contend"),
            Ok(1 << Part::Mode as u32 | 1 << Part::Contend as u32)
        );
        assert_eq!(parse("estimate"), Err("estimate".to_string()));
    }
}
