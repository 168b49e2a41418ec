//! The byte-size syntax of the examples' command lines: a whole number of bytes, optionally
//! followed by a binary unit, `KiB`, `MiB` or `GiB` (`64MiB`, `512KiB`, `1048576`).
//!
//! ```
//! use examples_common::size::parse;
//!
//! assert_eq!(parse("64MiB"), Ok(64 << 20));
//! assert_eq!(parse("4096"), Ok(4096));
//! assert!(parse("0").is_err()); // a size must be above 0
//! assert!(parse("1MB").is_err()); // binary units only, to leave no doubt
//! ```

/// Parses a size written as above, above zero; the error says what was expected.
pub fn parse(s: &str) -> Result<usize, String> {
    let bad = || {
        format!("bad size {s:?}: expected a number of bytes above 0, e.g. 64MiB (units KiB, MiB, GiB) or 4096")
    };
    let split = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(split);
    let n: usize = num.parse().map_err(|_| bad())?;
    let shift = match unit {
        "" => 0,
        "KiB" => 10,
        "MiB" => 20,
        "GiB" => 30,
        _ => return Err(bad()),
    };
    match n.checked_mul(1 << shift) {
        Some(0) | None => Err(bad()),
        Some(bytes) => Ok(bytes),
    }
}
