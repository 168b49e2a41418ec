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
//! ships tokio's integration tests. The runtime, task, signal and macro files and the
//! networking, I/O-driver and time files ([`select`]) are copied into a workspace generated
//! under `target/conformance/` ([`generate`]) and built against a crate named `tokio` that only
//! re-exports spinpark's items (`conformance/shim/lib.rs`). A file that does not compile is
//! built again without what the compiler's errors point into, round after round, each cut test
//! recorded with the missing item the error names ([`prune`], [`missing`]). The same files are
//! built once against the real tokio, only to list their tests, so that every test a cut took
//! away is counted ([`charge`]). Every compiled test then runs in a process of its own with a
//! time limit ([`runner`]); failures listed in `conformance/choices.toml` count apart
//! ([`choices`]), and the tables go to stdout and to `target/conformance/report.md`
//! ([`report`]). tokio's files are never changed in place and nothing of them is committed.

mod cargo;
mod charge;
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

use std::collections::{BTreeMap, BTreeSet};
use std::fs;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use std::time::{Duration, Instant};

use generate::{Inputs, Layout};
use report::{FileResult, Instance, Report, Status};
use runner::{Job, Limits, Verdict};

/// How many build-and-cut rounds a file gets before it counts as not building at all.
const MAX_ROUNDS: usize = 12;

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
                "-h" | "--help" => return Err(USAGE.to_string()),
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
    let args = Args::parse(std::env::args().skip(1))?;
    let started = Instant::now();
    let repo = Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .ok_or("no repository above conformance/")?
        .to_path_buf();
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

    let built = compile(&layout, &files)?;
    eprintln!("conformance: built in {:.0?}", started.elapsed());

    // tokio's own list of tests, for the files that lost some.
    let cut: Vec<String> = files
        .iter()
        .filter(|f| {
            built.states[*f].failure.is_some() || !built.states[*f].pruned.removed.is_empty()
        })
        .cloned()
        .collect();
    let reference = reference_lists(
        &layout,
        &Inputs {
            files: &cut,
            ..inputs.clone()
        },
    )?;

    let mut listed = BTreeMap::new();
    let mut jobs = Vec::new();
    for file in &files {
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
        args.limits.parallel
    );
    let total = jobs.len();
    let progress = |done: usize| {
        if done % 100 == 0 || done == total {
            eprintln!("conformance: {done}/{total} tests run");
        }
    };
    let just_jobs: Vec<Job> = jobs.iter().map(|(_, j)| j.clone()).collect();
    let runs = runner::run_all(&just_jobs, args.limits, &layout.suite(), &progress);
    let mut results: BTreeMap<(String, String), runner::Run> = BTreeMap::new();
    for ((file, job), run) in jobs.into_iter().zip(runs) {
        results.insert((file, job.test), run);
    }

    let choices_path = repo.join("conformance/choices.toml");
    let choices = choices::Choices::load(&choices_path)?;
    let mut used = BTreeSet::new();
    let mut report_files = Vec::new();
    let repo_prefix = format!("{}/", repo.display());
    for (file, set) in &selection.files {
        let state = &built.states[file];
        let (tests, ignored) = listed.get(file).cloned().unwrap_or_default();
        let all: Vec<String> = match reference.get(file) {
            Some(list) => list.clone(),
            None => tests.clone(),
        };
        let mut instances = Vec::new();
        for name in all.iter().chain(tests.iter().filter(|t| !all.contains(t))) {
            let status = if ignored.contains(name) {
                Status::Ignored
            } else if let Some(run) = results.get(&(file.clone(), name.clone())) {
                let id = format!("{file}::{name}");
                let (text, hung) = match &run.verdict {
                    Verdict::Passed => (None, false),
                    // Paths into this checkout say nothing elsewhere: keep them repo-relative.
                    Verdict::Failed(text) => (Some(text.replace(&repo_prefix, "")), false),
                    Verdict::Hung => (Some(String::new()), true),
                    Verdict::NotFound => {
                        (Some(String::from("(no such test in the binary)")), false)
                    }
                };
                match (text, choices.find(&id)) {
                    (None, _) => Status::Passed { flaky: run.flaky },
                    (Some(text), Some(choice)) => {
                        used.insert(choice.test.clone());
                        Status::ByChoice {
                            category: choice.category,
                            reason: choice.reason.clone(),
                            text,
                        }
                    }
                    (Some(text), None) => Status::Failed { text, hung },
                }
            } else {
                let items = match &state.failure {
                    Some(why) => [format!("(the file does not build: {})", first_line(why))].into(),
                    None => charge::charge(name, &state.pruned.removed)
                        .unwrap_or_else(|| ["(not attributed)".to_string()].into()),
                };
                if items.iter().any(|i| excluded(i)) {
                    Status::Excluded { items }
                } else {
                    Status::NotCompiled { items }
                }
            };
            instances.push(Instance {
                name: name.clone(),
                status,
            });
        }
        report_files.push(FileResult {
            file: file.clone(),
            set: *set,
            instances,
            note: state.failure.clone(),
            cuts: state
                .pruned
                .removed
                .iter()
                .filter_map(describe_cut)
                .collect(),
        });
    }
    let stale_choices = choices
        .entries
        .iter()
        .filter(|c| !used.contains(&c.test))
        .map(|c| format!("`{}`", c.test))
        .collect();
    let report = Report {
        tokio_version: tokio.version.clone(),
        files: report_files,
        left_out: selection.left_out.clone(),
        stale_choices,
    };

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
    let floor_path = repo.join("conformance/floor");
    let floor_text =
        fs::read_to_string(&floor_path).map_err(|e| format!("{}: {e}", floor_path.display()))?;
    let floor =
        choices::floor(&floor_text).map_err(|e| format!("{}: {e}", floor_path.display()))?;
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

/// A cut that is not a test, for the report: "fn `rt` (needs `Builder::new_local`)".
fn describe_cut(removed: &prune::Removed) -> Option<String> {
    use source::Kind;
    let what = match removed.kind {
        Kind::Test => return None,
        Kind::Use => return Some(format!("import `{}`", removed.name)),
        Kind::Fn => "fn",
        Kind::MacroRules => "macro",
        Kind::MacroCall | Kind::MacroBody => "macro call",
        Kind::Mod => "mod",
        Kind::Other => "item",
    };
    let items: Vec<String> = removed.items.iter().map(|i| format!("`{i}`")).collect();
    Some(format!(
        "{what} `{}` (needs {})",
        removed.name,
        items.join(", ")
    ))
}

/// Needs `tokio::fs` or tokio-only internals: left out of the counts.
fn excluded(item: &str) -> bool {
    item.starts_with("tokio::fs") || item.contains("is_rt_shutdown_err")
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
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

/// One test file's build state.
#[derive(Debug, Default)]
struct TargetState {
    /// Its files: the test file first, then its support files.
    files: Vec<PathBuf>,
    pruned: prune::Pruned,
    /// Why it does not build at all, if so.
    failure: Option<String>,
}

#[derive(Debug)]
struct Built {
    states: BTreeMap<String, TargetState>,
    executables: BTreeMap<String, PathBuf>,
}

/// Builds the suite, cutting what does not compile, round after round.
fn compile(layout: &Layout, files: &[String]) -> Result<Built, String> {
    let suite = layout.suite();
    let manifest = suite.join("Cargo.toml");
    let mut states = BTreeMap::new();
    for file in files {
        let dir = layout.test_dir(&suite, file);
        let mut paths = vec![layout.test_file(&suite, file)];
        paths.extend(rust_files(&dir.join("support")));
        let paths = paths
            .iter()
            .map(|p| p.canonicalize().unwrap_or_else(|_| p.clone()))
            .collect();
        states.insert(
            file.clone(),
            TargetState {
                files: paths,
                ..TargetState::default()
            },
        );
    }
    let mut executables = BTreeMap::new();
    let mut pending: Vec<String> = files.to_vec();
    for round in 1..=MAX_ROUNDS {
        eprintln!(
            "conformance: build round {round}: {} test files",
            pending.len()
        );
        let only = if round == 1 {
            Vec::new()
        } else {
            pending.clone()
        };
        let messages = cargo::build_tests(&manifest, &layout.target_dir(), &only)?;
        for (name, exe) in messages.executables {
            if states.contains_key(&name) {
                executables.insert(name, exe);
            }
        }
        let mut errors: BTreeMap<&str, Vec<&diag::Error>> = BTreeMap::new();
        for error in &messages.errors {
            if !states.contains_key(&error.target) {
                return Err(format!(
                    "{} does not build (the shim or a dependency):\n{}",
                    error.target, error.rendered
                ));
            }
            errors.entry(error.target.as_str()).or_default().push(error);
        }
        let mut next = Vec::new();
        for (target, errs) in errors {
            let state = states.get_mut(target).expect("checked above");
            let texts: Vec<String> = state
                .files
                .iter()
                .map(|p| fs::read_to_string(p).map_err(|e| format!("{}: {e}", p.display())))
                .collect::<Result<_, _>>()?;
            let files = state.files.clone();
            let index = |name: &Path| {
                let path = if name.is_absolute() {
                    name.to_path_buf()
                } else {
                    layout.root.join(name)
                };
                let path = path.canonicalize().unwrap_or(path);
                files.iter().position(|f| *f == path)
            };
            let plan = prune::plan(&texts, &errs, &state.pruned, index);
            if plan.edits.is_empty() {
                let why = plan
                    .unplaced
                    .first()
                    .cloned()
                    .unwrap_or_else(|| errs[0].rendered.clone());
                state.failure = Some(why);
                continue;
            }
            for (i, edits) in &plan.edits {
                let text = prune::apply(&texts[*i], edits);
                fs::write(&state.files[*i], text).map_err(|e| e.to_string())?;
            }
            state.pruned.absorb(plan);
            next.push(target.to_string());
        }
        pending = next;
        if pending.is_empty() {
            break;
        }
    }
    for file in pending {
        let state = states.get_mut(&file).expect("a selected file");
        state.failure = Some(format!(
            "still has errors after {MAX_ROUNDS} rounds of cuts"
        ));
    }
    Ok(Built {
        states,
        executables,
    })
}

fn rust_files(dir: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    if let Ok(entries) = fs::read_dir(dir) {
        for entry in entries.flatten() {
            let path = entry.path();
            if path.is_dir() {
                out.extend(rust_files(&path));
            } else if path.extension().is_some_and(|e| e == "rs") {
                out.push(path);
            }
        }
    }
    out.sort();
    out
}

/// The tests tokio's build of each file has, from a cache kept beside the generated workspace
/// (they depend only on tokio's version), building the missing ones against the real tokio.
fn reference_lists(
    layout: &Layout,
    inputs: &Inputs<'_>,
) -> Result<BTreeMap<String, Vec<String>>, String> {
    let cache_path = layout.root.join("reference-lists.json");
    let mut cache: serde_json::Value = fs::read_to_string(&cache_path)
        .ok()
        .and_then(|t| serde_json::from_str(&t).ok())
        .unwrap_or_default();
    if cache["tokio"].as_str() != Some(inputs.tokio_version) {
        cache = serde_json::json!({ "tokio": inputs.tokio_version, "lists": {} });
    }
    let missing: Vec<String> = inputs
        .files
        .iter()
        .filter(|f| cache["lists"].get(f.as_str()).is_none())
        .cloned()
        .collect();
    if !missing.is_empty() {
        eprintln!(
            "conformance: listing tokio's own tests of {} files (against tokio)",
            missing.len()
        );
        generate::reference(
            layout,
            &Inputs {
                files: &missing,
                ..inputs.clone()
            },
        )
        .map_err(|e| format!("writing the reference crate: {e}"))?;
        let manifest = layout.reference().join("Cargo.toml");
        let messages = cargo::build_tests(&manifest, &layout.target_dir(), &[])?;
        if let Some(error) = messages.errors.first() {
            return Err(format!(
                "tokio's own test {} does not build against tokio:\n{}",
                error.target, error.rendered
            ));
        }
        for file in &missing {
            let exe = messages
                .executables
                .get(file)
                .ok_or(format!("no test binary for tokio's {file}"))?;
            let (tests, _) = cargo::list_tests(exe)?;
            cache["lists"][file.as_str()] = serde_json::json!(tests);
        }
        fs::write(&cache_path, cache.to_string())
            .map_err(|e| format!("{}: {e}", cache_path.display()))?;
    }
    Ok(inputs
        .files
        .iter()
        .map(|f| {
            let list = cache["lists"][f.as_str()]
                .as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(str::to_string))
                        .collect()
                })
                .unwrap_or_default();
            (f.clone(), list)
        })
        .collect())
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

    #[test]
    fn exclusions() {
        assert!(excluded("tokio::fs"));
        assert!(excluded("tokio::fs::File::open"));
        assert!(excluded("tokio::runtime::is_rt_shutdown_err"));
        assert!(!excluded("tokio::task::LocalSet"));
    }
}
