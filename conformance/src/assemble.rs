//! Turning what the run found into the report's rows: for every test instance tokio's build of
//! a file has, whether it passed, failed (by choice or not), was ignored, or was cut (and for
//! want of what).
//!
//! ```text
//! let mut assembler = Assembler::new(&choices, &repo);
//! let row = assembler.file("rt_common", Set::TaskRuntime, &found);
//! let stale = assembler.stale();       // choices that matched no failure
//! ```
//!
//! The instances are tokio's list for a file that lost tests, else the binary's own list. An
//! instance the binary lacks was cut: [`crate::charge`] says for which items, and one that
//! needs tokio-only internals is excluded rather than not compiled.

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;

use crate::build::TargetState;
use crate::charge;
use crate::choices::{self, Choices};
use crate::prune::Removed;
use crate::report::{FileResult, Instance, Status};
use crate::runner::{Run, Verdict};
use crate::select::Set;
use crate::source::{Kind, Seg};

/// What the run found for one file.
#[derive(Debug)]
pub(crate) struct Found<'a> {
    pub(crate) state: &'a TargetState,
    /// The compiled binary's tests, and which of them are ignored.
    pub(crate) listed: (Vec<String>, Vec<String>),
    /// tokio's own list of the file's tests, when the file lost some.
    pub(crate) reference: Option<&'a Vec<String>>,
    /// (file, test) -> how its run went.
    pub(crate) results: &'a BTreeMap<(String, String), Run>,
}

/// Builds the rows, remembering which choices were used.
#[derive(Debug)]
pub(crate) struct Assembler<'a> {
    choices: &'a Choices,
    used: BTreeSet<String>,
    /// The files seen: only their choices can be stale.
    files: BTreeSet<String>,
    /// The checkout's path with a slash: taken out of failure texts, which then read the same
    /// on every machine.
    repo_prefix: String,
}

impl<'a> Assembler<'a> {
    pub(crate) fn new(choices: &'a Choices, repo: &Path) -> Self {
        Assembler {
            choices,
            used: BTreeSet::new(),
            files: BTreeSet::new(),
            repo_prefix: format!("{}/", repo.display()),
        }
    }

    /// One file's row.
    pub(crate) fn file(&mut self, file: &str, set: Set, found: &Found<'_>) -> FileResult {
        self.files.insert(file.to_string());
        let (tests, ignored) = &found.listed;
        let all: &[String] = found.reference.map_or(tests, |r| r);
        let extra: Vec<String> = tests.iter().filter(|t| !all.contains(t)).cloned().collect();
        let mut names: Vec<String> = all.iter().cloned().chain(extra).collect();
        // A cut test counts even where tokio's list lacks it (a list made before the file
        // was generated as it is now, or none at all): never dropped from the counts.
        names.extend(unlisted_cuts(&names, &found.state.pruned.removed));
        let instances = names
            .iter()
            .map(|name| Instance {
                name: name.clone(),
                status: self.status(file, name, ignored, found),
            })
            .collect();
        FileResult {
            file: file.to_string(),
            set,
            instances,
            note: found.state.failure.clone(),
            cuts: found
                .state
                .pruned
                .removed
                .iter()
                .filter_map(describe_cut)
                .collect(),
        }
    }

    fn status(&mut self, file: &str, name: &str, ignored: &[String], found: &Found<'_>) -> Status {
        if ignored.iter().any(|i| i == name) {
            return Status::Ignored;
        }
        let Some(run) = found.results.get(&(file.to_string(), name.to_string())) else {
            return cut_status(name, found.state);
        };
        let (text, hung) = match &run.verdict {
            Verdict::Passed => return Status::Passed { flaky: run.flaky },
            Verdict::Failed(text) => (text.replace(&self.repo_prefix, ""), false),
            Verdict::Hung => (String::new(), true),
            Verdict::NotFound => ("(no such test in the binary)".to_string(), false),
        };
        match self.choices.find(&format!("{file}::{name}")) {
            Some(choice) => {
                self.used.insert(choice.test.clone());
                Status::ByChoice {
                    category: choice.category,
                    reason: choice.reason.clone(),
                    text,
                }
            }
            None => Status::Failed { text, hung },
        }
    }

    /// The choices for the files seen that matched no failure.
    pub(crate) fn stale(&self) -> Vec<String> {
        let seen = |test: &str| {
            let file = test.split("::").next().unwrap_or(test);
            self.files.iter().any(|f| choices::glob(file, f))
        };
        self.choices
            .entries
            .iter()
            .filter(|c| seen(&c.test) && !self.used.contains(&c.test))
            .map(|c| format!("`{}`", c.test))
            .collect()
    }
}

/// A test the binary lacks: what it needs, and whether that excludes it.
fn cut_status(name: &str, state: &TargetState) -> Status {
    let items: BTreeSet<String> = match &state.failure {
        Some(why) => [format!("(the file does not build: {})", first_line(why))].into(),
        None => charge::charge(name, &state.pruned.removed)
            .unwrap_or_else(|| ["(not attributed)".to_string()].into()),
    };
    if items.iter().any(|i| excluded(i)) {
        Status::Excluded { items }
    } else {
        Status::NotCompiled { items }
    }
}

/// The tests that cuts took away and that no name in `names` stands for (by its last path
/// segment), each named with the module path the source shows (`Any` segments left out).
fn unlisted_cuts(names: &[String], removed: &[Removed]) -> Vec<String> {
    let listed: BTreeSet<&str> = names
        .iter()
        .map(|n| n.rsplit("::").next().unwrap_or(n))
        .collect();
    let mut out = Vec::new();
    for r in removed {
        for test in &r.test_names {
            if listed.contains(test.as_str()) {
                continue;
            }
            let mut path: Vec<&str> = r
                .container
                .iter()
                .filter_map(|seg| match seg {
                    Seg::Name(n) => Some(n.as_str()),
                    Seg::Any => None,
                })
                .collect();
            path.push(test);
            let name = path.join("::");
            if !out.contains(&name) {
                out.push(name);
            }
        }
    }
    out
}

/// A cut that is not a test, for the report: "fn `rt` (needs `Builder::new_local`)".
fn describe_cut(removed: &Removed) -> Option<String> {
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

/// Needs tokio-only internals: left out of the counts. (`tokio::fs` was one until spinpark
/// had it; what is missing of it now counts as not compiled.)
fn excluded(item: &str) -> bool {
    item.contains("is_rt_shutdown_err")
}

fn first_line(text: &str) -> &str {
    text.lines()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::choices::Category;

    fn removed(test: &str, item: &str) -> Removed {
        Removed {
            kind: Kind::Test,
            name: test.into(),
            container: Vec::new(),
            test_names: vec![test.into()],
            items: [item.to_string()].into(),
        }
    }

    #[test]
    fn every_instance_gets_its_status() {
        let choices = Choices::parse(
            "[[choice]]\ntest = \"f::c\"\ncategory = \"panic-text\"\nreason = \"ids\"\n\n\
             [[choice]]\ntest = \"f::gone\"\ncategory = \"panic-text\"\nreason = \"old\"\n\n\
             [[choice]]\ntest = \"other::x\"\ncategory = \"panic-text\"\nreason = \"not run\"\n",
        )
        .unwrap();
        let mut state = TargetState::default();
        state.pruned.removed = vec![
            removed("n", "tokio::task::LocalSet"),
            removed("e", "tokio::runtime::is_rt_shutdown_err"),
            Removed {
                kind: Kind::Fn,
                name: "rt".into(),
                container: Vec::new(),
                test_names: Vec::new(),
                items: ["Builder::new_local".to_string()].into(),
            },
        ];
        let run = |verdict| Run {
            verdict,
            flaky: false,
        };
        let results: BTreeMap<(String, String), Run> = [
            ("a", run(Verdict::Passed)),
            ("b", run(Verdict::Failed("/repo/net/src/x.rs:1".into()))),
            ("c", run(Verdict::Failed("boom".into()))),
            ("h", run(Verdict::Hung)),
        ]
        .into_iter()
        .map(|(t, r)| (("f".to_string(), t.to_string()), r))
        .collect();
        let names = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        let reference = names(&["a", "b", "c", "h", "i", "n", "e", "z"]);
        let found = Found {
            state: &state,
            listed: (names(&["a", "b", "c", "h", "i"]), names(&["i"])),
            reference: Some(&reference),
            results: &results,
        };
        let mut assembler = Assembler::new(&choices, Path::new("/repo"));
        let row = assembler.file("f", Set::TaskRuntime, &found);
        let status = |name: &str| {
            &row.instances
                .iter()
                .find(|i| i.name == name)
                .unwrap()
                .status
        };
        assert!(matches!(status("a"), Status::Passed { flaky: false }));
        assert!(
            matches!(status("b"), Status::Failed { text, hung: false } if text == "net/src/x.rs:1")
        );
        assert!(matches!(
            status("c"),
            Status::ByChoice {
                category: Category::PanicText,
                ..
            }
        ));
        assert!(matches!(status("h"), Status::Failed { hung: true, .. }));
        assert!(matches!(status("i"), Status::Ignored));
        assert!(
            matches!(status("n"), Status::NotCompiled { items } if items.contains("tokio::task::LocalSet"))
        );
        assert!(matches!(status("e"), Status::Excluded { .. }));
        assert!(
            matches!(status("z"), Status::NotCompiled { items } if items.contains("(not attributed)"))
        );
        assert_eq!(row.instances.len(), 8);
        assert_eq!(row.cuts, ["fn `rt` (needs `Builder::new_local`)"]);
        assert_eq!(assembler.stale(), ["`f::gone`"]);
    }

    #[test]
    fn a_cut_test_counts_when_tokio_s_list_lacks_it() {
        let choices = Choices::parse("").unwrap();
        let mut state = TargetState::default();
        let mut in_mod = removed("type_local_options", "LocalOptions: Send");
        in_mod.container = vec![Seg::Name("local_runtime".into())];
        state.pruned.removed = vec![removed("fn_tick", "Interval::tick: Unpin"), in_mod];
        let results: BTreeMap<(String, String), Run> = [(
            ("f".to_string(), "a".to_string()),
            Run {
                verdict: Verdict::Passed,
                flaky: false,
            },
        )]
        .into();
        // A stale list (made before the checks were tests), and no list at all.
        let stale = Vec::new();
        for reference in [Some(&stale), None] {
            let found = Found {
                state: &state,
                listed: (vec!["a".to_string()], Vec::new()),
                reference,
                results: &results,
            };
            let row =
                Assembler::new(&choices, Path::new("/repo")).file("f", Set::AutoTraits, &found);
            let names: Vec<&str> = row.instances.iter().map(|i| i.name.as_str()).collect();
            assert_eq!(names, ["a", "fn_tick", "local_runtime::type_local_options"]);
            assert!(matches!(row.instances[0].status, Status::Passed { .. }));
            for cut in &row.instances[1..] {
                assert!(matches!(cut.status, Status::NotCompiled { .. }), "{cut:?}");
            }
        }
    }

    #[test]
    fn exclusions() {
        assert!(!excluded("tokio::fs::File::open"));
        assert!(excluded("tokio::runtime::is_rt_shutdown_err"));
        assert!(!excluded("tokio::task::LocalSet"));
    }
}
