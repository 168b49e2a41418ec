//! The one duration syntax of the examples' and the benchmark's command lines: a whole number
//! followed by `ns`, `us`, `ms` or `s` (`50us`, `2s`), or a bare `0` for zero.
//!
//! ```
//! use std::time::Duration;
//! use examples_common::duration::parse;
//!
//! assert_eq!(parse("50us"), Ok(Duration::from_micros(50)));
//! assert_eq!(parse("0"), Ok(Duration::ZERO));
//! assert!(parse("5").is_err()); // a non-zero number needs a unit
//! ```
//!
//! The `#[spinpark::main(spin = "...")]` macro has its own parser, since it must run at
//! compile time inside the proc-macro crate.

use std::time::Duration;

/// Parses a duration written as above; the error says what was expected.
pub fn parse(s: &str) -> Result<Duration, String> {
    let bad = || format!("bad duration {s:?}: expected e.g. 50us (units ns, us, ms, s) or 0");
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: u64 = num.parse().map_err(|_| bad())?;
    match unit {
        "" if n == 0 => Ok(Duration::ZERO),
        "ns" => Ok(Duration::from_nanos(n)),
        "us" => Ok(Duration::from_micros(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        _ => Err(bad()),
    }
}
