//! Reading what a Rust test binary (libtest) prints: its list of tests, and the outcome of
//! running one test.
//!
//! ```text
//! let names = list(&stdout_of("bin --list --format terse"));   // ["a::b", "c"]
//! let outcome = outcome(&output_of("bin --exact a::b"), "a::b");
//! ```
//!
//! Stable libtest has no JSON output, so this reads its plain text: `name: test` lines for the
//! list; `test result: ok. 1 passed` and the `---- name stdout ----` section for a run.

/// The test names in `bin --list --format terse` output (benchmarks left out).
pub(crate) fn list(stdout: &str) -> Vec<String> {
    stdout
        .lines()
        .filter_map(|line| line.strip_suffix(": test"))
        .map(str::to_string)
        .collect()
}

/// How a single-test run (`bin --exact name --test-threads=1`) ended, from its output and
/// whether the process exited successfully.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Outcome {
    Passed,
    /// Failed, with the first lines of what it printed (the panic message).
    Failed(String),
    /// The filter matched no test (the name is not in the binary).
    NotRun,
}

pub(crate) fn outcome(output: &str, name: &str, exited_ok: bool) -> Outcome {
    let summary = output
        .lines()
        .rev()
        .find(|l| l.starts_with("test result: "))
        .unwrap_or_default();
    if exited_ok && summary.starts_with("test result: ok. 1 passed") {
        return Outcome::Passed;
    }
    if summary.contains(" 0 passed; 0 failed;") && exited_ok {
        return Outcome::NotRun;
    }
    Outcome::Failed(failure_text(output, name))
}

/// What a failed test printed, shortened: each panic as `panicked at file:line: message`
/// (its thread and the backtrace note dropped), in order, since the first panic is often one
/// the test provokes on purpose and the one that failed it comes later. Without any panic (a
/// crash, an abort), the last lines of the output.
pub(crate) fn failure_text(output: &str, name: &str) -> String {
    const LINES: usize = 12;
    let header = format!("---- {name} stdout ----");
    let section = match output.find(&header) {
        Some(at) => {
            let rest = &output[at + header.len()..];
            let end = rest.find("\nfailures:\n").unwrap_or(rest.len());
            &rest[..end]
        }
        None => output,
    };
    let mut lines = Vec::new();
    let mut in_panic = false;
    for line in section.lines() {
        if let Some(at) = line
            .find(" panicked at ")
            .filter(|_| line.starts_with("thread '"))
        {
            in_panic = true;
            lines.push(line[at + 1..].to_string());
        } else if line.trim().is_empty() || line.starts_with("note: run with `RUST_BACKTRACE") {
            in_panic = false;
        } else if in_panic {
            lines.push(format!("  {line}"));
        }
    }
    if lines.is_empty() {
        let all: Vec<&str> = section
            .lines()
            .filter(|l| {
                !l.trim().is_empty() && !l.starts_with("running ") && !l.starts_with("test ")
            })
            .collect();
        lines = all[all.len().saturating_sub(LINES)..]
            .iter()
            .map(|l| l.to_string())
            .collect();
    }
    lines.truncate(LINES);
    lines.join("\n")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lists_tests_only() {
        let out = "a::b: test\nc: test\nbench_x: benchmark\n\n2 tests, 1 benchmark\n";
        assert_eq!(list(out), ["a::b", "c"]);
    }

    #[test]
    fn reads_passes_failures_and_empty_runs() {
        let ok = "\nrunning 1 test\ntest a::b ... ok\n\ntest result: ok. 1 passed; 0 failed; 0 ignored; 0 measured; 9 filtered out; finished in 0.00s\n";
        assert_eq!(outcome(ok, "a::b", true), Outcome::Passed);

        let failed = "\nrunning 1 test\ntest a::b ... FAILED\n\nfailures:\n\n---- a::b stdout ----\n\nthread 'a::b' panicked at tests/x.rs:3:5:\nassertion `left == right` failed\n  left: 1\n right: 2\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\n\nfailures:\n    a::b\n\ntest result: FAILED. 0 passed; 1 failed; 0 ignored; 0 measured; 0 filtered out\n";
        assert_eq!(
            outcome(failed, "a::b", false),
            Outcome::Failed(
                "panicked at tests/x.rs:3:5:\n  assertion `left == right` failed\n    left: 1\n   right: 2".into()
            )
        );
        let two = "---- a stdout ----\n\nthread 'worker-1' (77) panicked at a.rs:1:1:\nexplicit panic\nnote: run with `RUST_BACKTRACE=1` environment variable to display a backtrace\n\nthread 'a' (76) panicked at a.rs:9:9:\nassertion failed: ok\n\n\nfailures:\n    a\n";
        assert_eq!(
            failure_text(two, "a"),
            "panicked at a.rs:1:1:\n  explicit panic\npanicked at a.rs:9:9:\n  assertion failed: ok"
        );

        let none = "\nrunning 0 tests\n\ntest result: ok. 0 passed; 0 failed; 0 ignored; 0 measured; 5 filtered out\n";
        assert_eq!(outcome(none, "zz", true), Outcome::NotRun);

        let crash = "\nrunning 1 test\nfatal runtime error: stack overflow\n";
        assert_eq!(
            outcome(crash, "a", false),
            Outcome::Failed("fatal runtime error: stack overflow".into())
        );
        // Exit status wins over a summary line (a crash after the summary).
        assert!(matches!(outcome(ok, "a::b", false), Outcome::Failed(_)));
    }
}
