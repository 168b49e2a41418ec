//! A rate limit for per-connection error lines, so that a churn of reset connections prints a
//! few lines a second and a count, not one line each.
//!
//! ```
//! use examples_common::log_limit::LogLimit;
//! static CONN_ERRORS: LogLimit = LogLimit::new(10);
//! CONN_ERRORS.log(format_args!("closing a connection: {}", "connection reset"));
//! ```
//!
//! Each one-second window prints at most `per_second` lines; the lines past that are counted,
//! and the first line of a later window is preceded by `(N similar lines suppressed)`.

use std::fmt;
use std::sync::Mutex;
use std::time::{Duration, Instant};

/// At most `per_second` lines a second to stderr; see the module docs.
#[derive(Debug)]
pub struct LogLimit {
    per_second: u32,
    state: Mutex<Window>,
}

#[derive(Debug)]
struct Window {
    start: Option<Instant>,
    printed: u32,
    suppressed: u64,
}

impl LogLimit {
    /// A limit of `per_second` lines a second (usable in a `static`).
    pub const fn new(per_second: u32) -> LogLimit {
        LogLimit {
            per_second,
            state: Mutex::new(Window {
                start: None,
                printed: 0,
                suppressed: 0,
            }),
        }
    }

    /// Prints `line` to stderr unless this second's lines are used up.
    pub fn log(&self, line: fmt::Arguments<'_>) {
        for l in self.lines_at(Instant::now(), line) {
            eprintln!("{l}");
        }
    }

    /// What [`LogLimit::log`] prints for `line` at `now` (tests pass their own clock).
    pub fn lines_at(&self, now: Instant, line: fmt::Arguments<'_>) -> Vec<String> {
        let mut w = self.state.lock().unwrap_or_else(|e| e.into_inner());
        let mut out = Vec::new();
        if w.start
            .is_none_or(|s| now.saturating_duration_since(s) >= Duration::from_secs(1))
        {
            if w.suppressed > 0 {
                out.push(format!("({} similar lines suppressed)", w.suppressed));
            }
            *w = Window {
                start: Some(now),
                printed: 0,
                suppressed: 0,
            };
        }
        if w.printed < self.per_second {
            w.printed += 1;
            out.push(line.to_string());
        } else {
            w.suppressed += 1;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prints_at_most_n_lines_a_second_then_the_count() {
        let limit = LogLimit::new(3);
        let t0 = Instant::now();
        let mut printed = Vec::new();
        for i in 0..100 {
            printed.extend(limit.lines_at(t0, format_args!("line {i}")));
        }
        assert_eq!(printed, ["line 0", "line 1", "line 2"]);
        let later = limit.lines_at(t0 + Duration::from_millis(1500), format_args!("next"));
        assert_eq!(later, ["(97 similar lines suppressed)", "next"]);
    }
}
