//! A tiny command-line parser for the examples: `--name value` pairs (durations are parsed
//! with [`crate::duration::parse`]).

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

/// Applies `--spin` to `builder`: `adaptive` (the default when the flag is absent) keeps the
/// runtime's adaptive spin policy, a duration (`50us`, `0`) sets a fixed window. Exits with a
/// message on bad input.
pub fn spin(builder: spinpark::Builder) -> spinpark::Builder {
    match value("--spin").as_deref() {
        None | Some("adaptive") => builder,
        Some(v) => builder.spin(crate::duration::parse(v).unwrap_or_else(|e| {
            eprintln!("--spin {v}: {e} (or `adaptive`)");
            std::process::exit(2)
        })),
    }
}
