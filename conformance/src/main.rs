//! `cargo conformance`: runs tokio's own integration tests against spinpark and prints how much
//! of tokio's behaviour spinpark reproduces.
//!
//! ```text
//! cargo conformance                              # everything; exits 1 below conformance/floor
//! cargo conformance --only 'rt_*,tcp_echo'       # some files (no floor check)
//! cargo conformance --out docs/conformance.md    # also write the full report there
//! ```
//!
//! How: cargo metadata finds the tokio package the repository locks, whose `tests/` directory
//! ships tokio's integration tests. The runtime, task, signal and macro files, the
//! networking, I/O-driver and time files and the sync files ([`select`]) are copied into a workspace generated
//! under `target/conformance/` ([`generate`]) and built against a crate named `tokio` that only
//! re-exports spinpark's items (`conformance/shim/lib.rs`). A file that does not compile is
//! built again without what the compiler's errors point into, round after round, each cut test
//! recorded with the missing item the error names ([`build`], [`prune`], [`missing`]). The same files are
//! built once against the real tokio, only to list their tests, so that every test a cut took
//! away is counted ([`charge`]). Every compiled test then runs in a process of its own with a
//! time limit ([`runner`]); failures listed in `conformance/choices.toml` count apart
//! ([`choices`], [`assemble`]), and the tables go to stdout and to
//! `target/conformance/report.md` ([`report`]). tokio's files are never changed in place and nothing of them is committed.

mod assemble;
mod build;
mod cargo;
mod charge;
mod checks;
mod choices;
mod diag;
mod generate;
mod libtest;
mod missing;
mod prune;
mod report;
mod runner;
mod select;
mod source;

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use generate::{Inputs, Layout};
use report::{FileResult, Report};
use runner::{Job, Limits};

const USAGE: &str =
    "usage: cargo conformance [--only FILES] [--jobs N] [--timeout SECS] [--out PATH]

  --only FILES    comma-separated test file names or globs (rt_*,tcp_echo); skips the floor check
  --jobs N        tests run at once (default: the number of CPUs)
  --timeout SECS  time limit per test (default 30)
  --out PATH      also write the full markdown report to PATH (docs/conformance.md)";

#[derive(Debug)]
struct Args {
    only: Vec<String>,
    limits: Limits,
    out: Option<PathBuf>,
}

impl Args {
    fn parse(mut args: impl Iterator<Item = String>) -> Result<Args, String> {
        let cpus = std::thread::available_parallelism().map_or(2, |n| n.get());
        let mut parsed = Args {
            only: Vec::new(),
            limits: Limits {
                parallel: cpus,
                timeout: Duration::from_secs(30),
            },
            out: None,
        };
        while let Some(arg) = args.next() {
            let mut value = || args.next().ok_or(format!("{arg} needs a value\n{USAGE}"));
            match arg.as_str() {
                "--only" => parsed.only = value()?.split(',').map(str::to_string).collect(),
                "--jobs" => {
                    let v = value()?;
                    parsed.limits.parallel =
                        v.parse().map_err(|_| format!("--jobs {v}: not a number"))?;
                }
                "--timeout" => {
                    let v = value()?;
                    let secs: u64 = v
                        .parse()
                        .map_err(|_| format!("--timeout {v}: not a number"))?;
                    parsed.limits.timeout = Duration::from_secs(secs);
                }
                "--out" => parsed.out = Some(PathBuf::from(value()?)),
                other => return Err(format!("unknown argument {other}\n{USAGE}")),
            }
        }
        Ok(parsed)
    }
}

fn main() -> ExitCode {
    match run() {
        Ok(code) => code,
        Err(err) => {
            eprintln!("conformance: {err}");
            ExitCode::from(2)
        }
    }
}

fn run() -> Result<ExitCode, String> {
    if std::env::args().skip(1).any(|a| a == "-h" || a == "--help") {
        println!("{USAGE}");
        return Ok(ExitCode::SUCCESS);
    }
    let args = Args::parse(std::env::args().skip(1))?;
    let started = Instant::now();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("no repository above conformance/")?
        .to_path_buf();
    // Read first: a mistake in these should not wait for the build.
    let choices = choices::Choices::load(&repo.join("conformance/choices.toml"))?;
    let floor_path = repo.join("conformance/floor");
    let floor = fs::read_to_string(&floor_path)
        .map_err(|e| e.to_string())
        .and_then(|text| choices::floor(&text))
        .map_err(|e| format!("{}: {e}", floor_path.display()))?;
    let (target_dir, tokio) = cargo::metadata(&repo)?;
    let tokio_tests = tokio.dir.join("tests");
    eprintln!(
        "conformance: tokio {} tests from {}",
        tokio.version,
        tokio_tests.display()
    );

    let names = test_file_names(&tokio_tests)?;
    let mut selection = select::select(&names);
    if !args.only.is_empty() {
        selection
            .files
            .retain(|(f, _)| args.only.iter().any(|p| choices::glob(p, f)));
    }
    let files: Vec<String> = selection.files.iter().map(|(f, _)| f.clone()).collect();
    if files.is_empty() {
        return Err("no test file selected".into());
    }
    let layout = Layout {
        root: target_dir.join("conformance"),
    };
    let inputs = Inputs {
        repo: &repo,
        tokio_version: &tokio.version,
        tokio_tests: &tokio_tests,
        files: &files,
    };
    generate::suite(&layout, &inputs)
        .map_err(|e| format!("writing {}: {e}", layout.root.display()))?;

    let built = build::compile(&layout, &files)?;
    eprintln!("conformance: built in {:.0?}", started.elapsed());

    // tokio's own list of tests, for the files that lost some.
    let cut: Vec<String> = files
        .iter()
        .filter(|f| {
            built.states[*f].failure.is_some() || !built.states[*f].pruned.removed.is_empty()
        })
        .cloned()
        .collect();
    let reference = build::reference_lists(
        &layout,
        &Inputs {
            files: &cut,
            ..inputs.clone()
        },
    )?;

    let (listed, results) = run_tests(&layout, &built, &files, args.limits)?;

    let mut assembler = assemble::Assembler::new(&choices, &repo);
    let report_files: Vec<FileResult> = selection
        .files
        .iter()
        .map(|(file, set)| {
            let found = assemble::Found {
                state: &built.states[file],
                listed: listed.get(file).cloned().unwrap_or_default(),
                reference: reference.get(file),
                results: &results,
            };
            assembler.file(file, *set, &found)
        })
        .collect();
    let stale_choices = assembler.stale();
    let report = Report {
        tokio_version: tokio.version.clone(),
        files: report_files,
        left_out: selection.left_out.clone(),
        stale_choices,
    };

    finish(&report, &layout, floor, &args, started)
}

/// Which tests each compiled file has (and which are ignored), and how each run went.
type Listed = BTreeMap<String, (Vec<String>, Vec<String>)>;
type Results = BTreeMap<(String, String), runner::Run>;

/// Lists every compiled binary's tests and runs the ones not ignored.
fn run_tests(
    layout: &Layout,
    built: &build::Built,
    files: &[String],
    limits: Limits,
) -> Result<(Listed, Results), String> {
    let mut listed = BTreeMap::new();
    let mut jobs = Vec::new();
    for file in files {
        let Some(exe) = built.executables.get(file) else {
            continue;
        };
        let (tests, ignored) = cargo::list_tests(exe)?;
        for test in tests.iter().filter(|t| !ignored.contains(t)) {
            jobs.push((
                file.clone(),
                Job {
                    exe: exe.clone(),
                    test: test.clone(),
                    log: layout
                        .logs()
                        .join(file)
                        .join(format!("{}.log", test.replace("::", "__"))),
                },
            ));
        }
        listed.insert(file.clone(), (tests, ignored));
    }
    eprintln!(
        "conformance: running {} tests, {} at a time",
        jobs.len(),
        limits.parallel
    );
    let total = jobs.len();
    let progress = |done: usize| {
        if done % 100 == 0 || done == total {
            eprintln!("conformance: {done}/{total} tests run");
        }
    };
    let just_jobs: Vec<Job> = jobs.iter().map(|(_, j)| j.clone()).collect();
    let runs = runner::run_all(&just_jobs, limits, &layout.suite(), &progress);
    let mut results: BTreeMap<(String, String), runner::Run> = BTreeMap::new();
    for ((file, job), run) in jobs.into_iter().zip(runs) {
        results.insert((file, job.test), run);
    }
    Ok((listed, results))
}

/// Prints the summary, writes the report, and checks the floor (not for an `--only` run).
fn finish(
    report: &Report,
    layout: &Layout,
    floor: usize,
    args: &Args,
    started: Instant,
) -> Result<ExitCode, String> {
    print!("{}", report.summary());
    let markdown = report.markdown();
    let saved = layout.root.join("report.md");
    fs::write(&saved, &markdown).map_err(|e| format!("{}: {e}", saved.display()))?;
    println!("The full report: {}", saved.display());
    if let Some(out) = &args.out {
        fs::write(out, &markdown).map_err(|e| format!("{}: {e}", out.display()))?;
        println!("Also written to {}", out.display());
    }
    println!("Took {:.0?}.", started.elapsed());

    let passed = report.counts(None).passed;
    if !args.only.is_empty() {
        println!("Some files only (--only): the floor is not checked.");
        return Ok(ExitCode::SUCCESS);
    }
    if passed < floor {
        println!("FAIL: {passed} tests passed, below the floor of {floor} (conformance/floor).");
        return Ok(ExitCode::FAILURE);
    }
    if passed > floor {
        println!(
            "{passed} tests passed, above the floor of {floor} (raise conformance/floor once \
             more pass for good)."
        );
    } else {
        println!("{passed} tests passed: the floor.");
    }
    Ok(ExitCode::SUCCESS)
}

fn test_file_names(dir: &Path) -> Result<Vec<String>, String> {
    let mut names = Vec::new();
    for entry in fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
        let path = entry.map_err(|e| e.to_string())?.path();
        if path.extension().is_some_and(|e| e == "rs") {
            if let Some(stem) = path.file_stem() {
                names.push(stem.to_string_lossy().into_owned());
            }
        }
    }
    names.sort();
    Ok(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn arguments() {
        let args = |v: &[&str]| Args::parse(v.iter().map(|s| s.to_string()));
        let a = args(&[
            "--only",
            "rt_*,tcp_echo",
            "--jobs",
            "3",
            "--timeout",
            "5",
            "--out",
            "x.md",
        ])
        .unwrap();
        assert_eq!(a.only, ["rt_*", "tcp_echo"]);
        assert_eq!(
            (a.limits.parallel, a.limits.timeout),
            (3, Duration::from_secs(5))
        );
        assert_eq!(a.out, Some(PathBuf::from("x.md")));
        assert!(args(&["--jobs"]).is_err());
        assert!(args(&["--jobs", "x"]).is_err());
        assert!(args(&["--frobnicate"]).is_err());
    }
}
