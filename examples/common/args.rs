//! A tiny command-line parser for the examples: `--name value` pairs and durations written
//! with a unit (`250us`, `1ms`, `0`).
#![allow(dead_code)]

use std::time::Duration;

/// The value after `--name`, if given.
pub fn value(name: &str) -> Option<String> {
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == name {
            return args.next();
        }
        if let Some(v) = a.strip_prefix(&format!("{name}=")) {
            return Some(v.to_string());
        }
    }
    None
}

/// Parses `value(name)` with `parse`, or returns `default`; exits with a message on bad input.
pub fn get<T>(name: &str, default: T, parse: impl FnOnce(&str) -> Result<T, String>) -> T {
    match value(name) {
        None => default,
        Some(v) => parse(&v).unwrap_or_else(|e| {
            eprintln!("{name} {v}: {e}");
            std::process::exit(2)
        }),
    }
}

/// A number.
pub fn number<T: std::str::FromStr>(s: &str) -> Result<T, String> {
    s.parse().map_err(|_| format!("not a number: {s:?}"))
}

/// A duration: a whole number followed by `ns`, `us`, `ms` or `s`; `0` alone means zero.
pub fn duration(s: &str) -> Result<Duration, String> {
    if s == "0" {
        return Ok(Duration::ZERO);
    }
    let at = s
        .find(|c: char| !c.is_ascii_digit())
        .ok_or_else(|| format!("{s:?} has no unit (ns, us, ms, s)"))?;
    let n: u64 = s[..at]
        .parse()
        .map_err(|_| format!("bad number in {s:?}"))?;
    match &s[at..] {
        "ns" => Ok(Duration::from_nanos(n)),
        "us" => Ok(Duration::from_micros(n)),
        "ms" => Ok(Duration::from_millis(n)),
        "s" => Ok(Duration::from_secs(n)),
        u => Err(format!("unknown unit {u:?}: use ns, us, ms or s")),
    }
}
