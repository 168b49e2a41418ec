//! The results, counted and written out: a table per file, totals per set, the missing items
//! ranked by how many tests each would unblock, and every failure and removed test.
//!
//! ```text
//! let report = Report { tokio_version, files, left_out, stale_choices };
//! print!("{}", report.summary());          // stdout: tables, top missing items, failures
//! fs::write(path, report.markdown())?;     // everything
//! ```
//!
//! A *test* here is a test instance: tokio compiles some test bodies once per runtime flavour
//! (`rt_common`'s three modules), and each copy counts. Excluded tests (those needing
//! tokio-only internals) are counted apart and left out of the percentages.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write;

use crate::choices::Category;
use crate::select::Set;

/// How one test instance fared.
#[derive(Debug, Clone)]
pub(crate) enum Status {
    Passed {
        flaky: bool,
    },
    Failed {
        text: String,
        hung: bool,
    },
    ByChoice {
        category: Category,
        reason: String,
        text: String,
    },
    /// Removed from the build; the items it needs.
    NotCompiled {
        items: BTreeSet<String>,
    },
    /// Needs tokio-only internals.
    Excluded {
        items: BTreeSet<String>,
    },
    Ignored,
}

#[derive(Debug, Clone)]
pub(crate) struct Instance {
    pub(crate) name: String,
    pub(crate) status: Status,
}

/// One test file's results.
#[derive(Debug, Clone)]
pub(crate) struct FileResult {
    pub(crate) file: String,
    pub(crate) set: Set,
    pub(crate) instances: Vec<Instance>,
    /// Set when the whole file could not be built.
    pub(crate) note: Option<String>,
    /// What else was cut from it (helpers, imports), described.
    pub(crate) cuts: Vec<String>,
}

/// Counts over some instances.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub(crate) struct Counts {
    pub(crate) total: usize,
    pub(crate) excluded: usize,
    pub(crate) not_compiled: usize,
    pub(crate) ignored: usize,
    pub(crate) passed: usize,
    pub(crate) flaky: usize,
    pub(crate) failed: usize,
    pub(crate) hung: usize,
    pub(crate) by_choice: usize,
}

impl Counts {
    pub(crate) fn of<'a>(instances: impl IntoIterator<Item = &'a Instance>) -> Counts {
        let mut c = Counts::default();
        for i in instances {
            c.total += 1;
            match &i.status {
                Status::Passed { flaky } => {
                    c.passed += 1;
                    c.flaky += usize::from(*flaky);
                }
                Status::Failed { hung, .. } => {
                    c.failed += 1;
                    c.hung += usize::from(*hung);
                }
                Status::ByChoice { .. } => c.by_choice += 1,
                Status::NotCompiled { .. } => c.not_compiled += 1,
                Status::Excluded { .. } => c.excluded += 1,
                Status::Ignored => c.ignored += 1,
            }
        }
        c
    }

    /// The tests that count: all but the excluded.
    pub(crate) fn counted(&self) -> usize {
        self.total - self.excluded
    }

    pub(crate) fn compiled(&self) -> usize {
        self.counted() - self.not_compiled
    }

    /// Compiled and run (not ignored).
    pub(crate) fn run(&self) -> usize {
        self.compiled() - self.ignored
    }

    fn add(&mut self, o: Counts) {
        self.total += o.total;
        self.excluded += o.excluded;
        self.not_compiled += o.not_compiled;
        self.ignored += o.ignored;
        self.passed += o.passed;
        self.flaky += o.flaky;
        self.failed += o.failed;
        self.hung += o.hung;
        self.by_choice += o.by_choice;
    }
}

/// What a failure's output says, in one line: its last panic message, else its first line
/// (libtest's "test did not panic as expected").
fn said(text: &str) -> Option<String> {
    let line = text
        .lines()
        .rev()
        .find(|l| l.starts_with("  "))
        .or_else(|| text.lines().next())?
        .trim();
    (!line.is_empty()).then(|| format!("`{}`", line.replace('`', "'")))
}

fn percent(part: usize, whole: usize) -> String {
    if whole == 0 {
        return "-".into();
    }
    format!("{:.1} %", part as f64 * 100.0 / whole as f64)
}

/// Everything the run found.
#[derive(Debug)]
pub(crate) struct Report {
    pub(crate) tokio_version: String,
    pub(crate) files: Vec<FileResult>,
    pub(crate) left_out: Vec<(String, &'static str)>,
    /// Choices that matched no failing test (stale, or a timing test that passed this time).
    pub(crate) stale_choices: Vec<String>,
}

/// A missing item's weight.
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Need {
    /// Tests that need it.
    pub(crate) needed_by: usize,
    /// Tests that need nothing else that is missing.
    pub(crate) alone: usize,
    pub(crate) files: BTreeSet<String>,
}

impl Report {
    pub(crate) fn counts(&self, set: Option<Set>) -> Counts {
        let mut c = Counts::default();
        for f in self.files.iter().filter(|f| set.is_none_or(|s| f.set == s)) {
            c.add(Counts::of(&f.instances));
        }
        c
    }

    /// The missing items of a set's not-compiled tests, most needed first.
    pub(crate) fn missing(&self, set: Set) -> Vec<(String, Need)> {
        let mut needs: BTreeMap<String, Need> = BTreeMap::new();
        for f in self.files.iter().filter(|f| f.set == set) {
            for i in &f.instances {
                if let Status::NotCompiled { items } = &i.status {
                    for item in items {
                        let need = needs.entry(item.clone()).or_default();
                        need.needed_by += 1;
                        need.alone += usize::from(items.len() == 1);
                        need.files.insert(f.file.clone());
                    }
                }
            }
        }
        let mut ranked: Vec<(String, Need)> = needs.into_iter().collect();
        ranked.sort_by(|a, b| {
            (b.1.needed_by, b.1.alone)
                .cmp(&(a.1.needed_by, a.1.alone))
                .then_with(|| a.0.cmp(&b.0))
        });
        ranked
    }

    fn totals_table(&self, out: &mut String) {
        out.push_str(
            "| set | tests | excluded | compiled | compile % | passed | failed | by choice | pass % |\n\
             |---|---:|---:|---:|---:|---:|---:|---:|---:|\n",
        );
        let sets = Set::ALL.map(Some).into_iter().chain([None]);
        for set in sets {
            let c = self.counts(set);
            let name = set.map_or("**all**", Set::title);
            let _ = writeln!(
                out,
                "| {name} | {} | {} | {} / {} | {} | {} | {} | {} | {} |",
                c.total,
                c.excluded,
                c.compiled(),
                c.counted(),
                percent(c.compiled(), c.counted()),
                c.passed,
                c.failed,
                c.by_choice,
                percent(c.passed, c.run()),
            );
        }
    }

    fn file_table(&self, set: Set, out: &mut String) {
        let _ = writeln!(out, "### {}\n", set.title());
        out.push_str(
            "| file | tests | passed | failed | by choice | not compiled | excluded |\n\
             |---|---:|---:|---:|---:|---:|---:|\n",
        );
        for f in self.files.iter().filter(|f| f.set == set) {
            let c = Counts::of(&f.instances);
            let mut failed = c.failed.to_string();
            if c.hung > 0 {
                let _ = write!(failed, " ({} hung)", c.hung);
            }
            let mut note = String::new();
            if c.ignored > 0 {
                let _ = write!(note, " ({} ignored)", c.ignored);
            }
            if c.total == 0 {
                note.push_str(" (no test in this configuration)");
            }
            if f.note.is_some() {
                note.push_str(" (does not build)");
            }
            let _ = writeln!(
                out,
                "| {}{note} | {} | {} | {failed} | {} | {} | {} |",
                f.file, c.total, c.passed, c.by_choice, c.not_compiled, c.excluded
            );
        }
        let c = self.counts(Some(set));
        let _ = writeln!(
            out,
            "| **total** | {} | {} | {} | {} | {} | {} |\n",
            c.total, c.passed, c.failed, c.by_choice, c.not_compiled, c.excluded
        );
    }

    fn missing_table(&self, set: Set, limit: Option<usize>, out: &mut String) {
        let ranked = self.missing(set);
        let _ = writeln!(out, "### {}\n", set.title());
        if ranked.is_empty() {
            out.push_str("None.\n\n");
            return;
        }
        out.push_str(
            "| item | tests needing it | would compile with it alone | files |\n|---|---:|---:|---|\n",
        );
        let shown = limit.unwrap_or(ranked.len());
        for (item, need) in ranked.iter().take(shown) {
            let files: Vec<&str> = need.files.iter().map(String::as_str).collect();
            let _ = writeln!(
                out,
                "| `{}` | {} | {} | {} |",
                item.replace('|', "\\|"),
                need.needed_by,
                need.alone,
                files.join(", ")
            );
        }
        if ranked.len() > shown {
            let _ = writeln!(out, "| ... {} more | | | |", ranked.len() - shown);
        }
        out.push('\n');
    }

    fn header(&self, out: &mut String) {
        let _ = writeln!(
            out,
            "tokio {}'s own integration tests, built against spinpark through a crate named `tokio` \
             that re-exports spinpark's items (`conformance/shim/lib.rs`), each test run in a \
             process of its own. *tests* counts test instances (a body tokio compiles once per \
             runtime flavour counts once per flavour; in `async_send_sync`, each check of a \
             type's or a future's auto traits counts once); *excluded* tests need tokio-only \
             internals; *compiled* is out of the rest, the others being built without (see the \
             missing items); *pass %* is passed out of compiled (ignored ones aside). Failures \
             listed in `conformance/choices.toml` are spinpark's choice and count as *by \
             choice*, not as passed. From the real tokio come only `io`'s traits and utilities \
             (no sockets, no standard streams) and the `select!`/`join!`/`try_join!`/`pin!` \
             macros; `sync` is `spinpark::sync` (tokio's primitives, wrapped where they wait), \
             `fs`, `process` and `io::{{stdin, stdout, stderr}}` are spinpark's; `tokio-test` \
             and `tokio-stream` are built as in tokio's own tests, and what the measured files \
             use of them (the mock task, assertion macros, I/O mocks without `wait`, stream \
             adapters) needs no runtime.\n",
            self.tokio_version
        );
    }

    /// What the command prints: totals, per-file tables, the top missing items, failures.
    pub(crate) fn summary(&self) -> String {
        let mut out = String::new();
        for set in Set::ALL {
            self.file_table(set, &mut out);
        }
        out.push_str("### totals\n\n");
        self.totals_table(&mut out);
        out.push_str("\n## Missing items (top 15)\n\n");
        for set in Set::ALL {
            self.missing_table(set, Some(15), &mut out);
        }
        self.failures(false, &mut out);
        out
    }

    /// The full report, for `docs/conformance.md`.
    pub(crate) fn markdown(&self) -> String {
        let mut out = String::from("# tokio conformance\n\n");
        self.header(&mut out);
        out.push_str(
            "Generated by `cargo conformance` (see the README); `cargo conformance --out \
             docs/conformance.md` rewrites this file.\n\n## Totals\n\n",
        );
        self.totals_table(&mut out);
        out.push_str("\n## Per file\n\n");
        for set in Set::ALL {
            self.file_table(set, &mut out);
        }
        out.push_str(
            "## Missing items\n\nRanked by the number of tests that need the item; the next \
             column counts those that need nothing else missing. A test can need several items, \
             and an item hidden behind another error is only seen once that one is gone.\n\n",
        );
        for set in Set::ALL {
            self.missing_table(set, None, &mut out);
        }
        self.failures(true, &mut out);
        self.by_choice(&mut out);
        self.removed(&mut out);
        self.excluded_and_left_out(&mut out);
        out
    }

    fn failures(&self, full: bool, out: &mut String) {
        out.push_str("## Failures\n\n");
        let mut any = false;
        for f in &self.files {
            for i in &f.instances {
                if let Status::Failed { text, hung } = &i.status {
                    any = true;
                    let what = if *hung {
                        "hung (killed at the time limit)"
                    } else {
                        "failed"
                    };
                    let _ = writeln!(out, "- `{}::{}`: {what}", f.file, i.name);
                    let lines: Vec<&str> = text.lines().collect();
                    let shown = if full {
                        lines.len()
                    } else {
                        lines.len().min(4)
                    };
                    if shown > 0 {
                        out.push_str("  ```text\n");
                        for line in &lines[..shown] {
                            let _ = writeln!(out, "  {line}");
                        }
                        out.push_str("  ```\n");
                    }
                }
            }
        }
        if !any {
            out.push_str("None.\n");
        }
        let flaky: Vec<String> = self
            .files
            .iter()
            .flat_map(|f| {
                f.instances.iter().filter_map(move |i| match i.status {
                    Status::Passed { flaky: true } => Some(format!("`{}::{}`", f.file, i.name)),
                    _ => None,
                })
            })
            .collect();
        if !flaky.is_empty() {
            let _ = writeln!(
                out,
                "\nFailed once, then passed (counted as passed): {}.",
                flaky.join(", ")
            );
        }
        if !self.stale_choices.is_empty() {
            let _ = writeln!(
                out,
                "\nEntries of conformance/choices.toml that matched no failure this run (remove them \
                 if they keep passing; a timing entry may pass now and then): {}.",
                self.stale_choices.join(", ")
            );
        }
        out.push('\n');
    }

    fn by_choice(&self, out: &mut String) {
        out.push_str("## Failures by choice\n\n");
        for category in Category::ALL {
            let _ = writeln!(out, "### {}: {}\n", category.key(), category.meaning());
            let mut any = false;
            for f in &self.files {
                for i in &f.instances {
                    if let Status::ByChoice {
                        category: c,
                        reason,
                        text,
                    } = &i.status
                    {
                        if *c == category {
                            any = true;
                            let _ = write!(out, "- `{}::{}`: {reason}", f.file, i.name);
                            match said(text) {
                                Some(said) => {
                                    let _ = writeln!(out, " (it says: {said})");
                                }
                                None => out.push('\n'),
                            }
                        }
                    }
                }
            }
            out.push_str(if any { "\n" } else { "None.\n\n" });
        }
    }

    fn removed(&self, out: &mut String) {
        out.push_str("## Tests not compiled\n\nEach was cut from the build, with the items its errors name.\n\n");
        for f in &self.files {
            let removed: Vec<&Instance> = f
                .instances
                .iter()
                .filter(|i| matches!(i.status, Status::NotCompiled { .. }))
                .collect();
            if removed.is_empty() && f.cuts.is_empty() {
                continue;
            }
            let _ = writeln!(out, "### {}\n", f.file);
            if let Some(note) = &f.note {
                let _ = writeln!(out, "The file does not build: {note}\n");
            }
            for i in removed {
                if let Status::NotCompiled { items } = &i.status {
                    let items: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
                    let _ = writeln!(out, "- `{}`: {}", i.name, items.join(", "));
                }
            }
            if !f.cuts.is_empty() {
                let _ = writeln!(out, "\nAlso cut: {}.", f.cuts.join("; "));
            }
            out.push('\n');
        }
    }

    fn excluded_and_left_out(&self, out: &mut String) {
        out.push_str("## Excluded tests\n\nThey need tokio-only internals.\n\n");
        let mut any = false;
        for f in &self.files {
            for i in &f.instances {
                if let Status::Excluded { items } = &i.status {
                    any = true;
                    let items: Vec<String> = items.iter().map(|s| format!("`{s}`")).collect();
                    let _ = writeln!(out, "- `{}::{}`: {}", f.file, i.name, items.join(", "));
                }
            }
        }
        out.push_str(if any { "\n" } else { "None.\n\n" });
        out.push_str(
            "## Files left out\n\nWithin the sets' name patterns. Files of other subsystems \
             (`tracing_*`, ...) are not part of any set.\n\n\
             | file | why |\n|---|---|\n",
        );
        for (file, why) in &self.left_out {
            let _ = writeln!(out, "| {file} | {why} |");
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn inst(name: &str, status: Status) -> Instance {
        Instance {
            name: name.into(),
            status,
        }
    }

    fn items(list: &[&str]) -> BTreeSet<String> {
        list.iter().map(|s| s.to_string()).collect()
    }

    fn report() -> Report {
        let a = FileResult {
            file: "rt_a".into(),
            set: Set::TaskRuntime,
            note: None,
            cuts: vec!["fn `rt` (needs `Builder::new_local`)".into()],
            instances: vec![
                inst("p1", Status::Passed { flaky: false }),
                inst("p2", Status::Passed { flaky: true }),
                inst(
                    "f",
                    Status::Failed {
                        text: "boom".into(),
                        hung: false,
                    },
                ),
                inst(
                    "h",
                    Status::Failed {
                        text: String::new(),
                        hung: true,
                    },
                ),
                inst(
                    "c",
                    Status::ByChoice {
                        category: Category::PanicText,
                        reason: "ids".into(),
                        text: "x".into(),
                    },
                ),
                inst(
                    "n1",
                    Status::NotCompiled {
                        items: items(&["tokio::task::LocalSet"]),
                    },
                ),
                inst(
                    "n2",
                    Status::NotCompiled {
                        items: items(&["tokio::task::LocalSet", "tokio::task::spawn_local"]),
                    },
                ),
                inst(
                    "e",
                    Status::Excluded {
                        items: items(&["tokio::fs"]),
                    },
                ),
                inst("i", Status::Ignored),
            ],
        };
        let b = FileResult {
            file: "tcp_b".into(),
            set: Set::IoTime,
            note: None,
            cuts: Vec::new(),
            instances: vec![inst(
                "n",
                Status::NotCompiled {
                    items: items(&["TcpStream::peek"]),
                },
            )],
        };
        Report {
            tokio_version: "1.54.1".into(),
            files: vec![a, b],
            left_out: vec![("time_wasm".into(), "wasm only")],
            stale_choices: vec![],
        }
    }

    #[test]
    fn counts_and_percentages() {
        let r = report();
        let c = r.counts(Some(Set::TaskRuntime));
        assert_eq!(
            (
                c.total,
                c.excluded,
                c.counted(),
                c.not_compiled,
                c.compiled()
            ),
            (9, 1, 8, 2, 6)
        );
        assert_eq!(
            (
                c.passed,
                c.flaky,
                c.failed,
                c.hung,
                c.by_choice,
                c.ignored,
                c.run()
            ),
            (2, 1, 2, 1, 1, 1, 5)
        );
        assert_eq!(r.counts(None).total, 10);
        assert_eq!(percent(6, 8), "75.0 %");
        assert_eq!(percent(1, 0), "-");
    }

    #[test]
    fn ranks_missing_items() {
        let r = report();
        let ranked = r.missing(Set::TaskRuntime);
        assert_eq!(ranked[0].0, "tokio::task::LocalSet");
        assert_eq!((ranked[0].1.needed_by, ranked[0].1.alone), (2, 1));
        assert_eq!((ranked[1].1.needed_by, ranked[1].1.alone), (1, 0));
        assert_eq!(r.missing(Set::IoTime)[0].0, "TcpStream::peek");
    }

    #[test]
    fn markdown_has_every_section() {
        let md = report().markdown();
        for needle in [
            "| **all** | 10 | 1 | 6 / 9 | 66.7 % | 2 | 2 | 1 | 40.0 % |",
            "| rt_a (1 ignored) | 9 | 2 | 2 (1 hung) | 1 | 2 | 1 |",
            "| `tokio::task::LocalSet` | 2 | 1 | rt_a |",
            "- `rt_a::f`: failed",
            "- `rt_a::c`: ids (it says: `x`)",
            "- `n2`: `tokio::task::LocalSet`, `tokio::task::spawn_local`",
            "- `rt_a::e`: `tokio::fs`",
            "| time_wasm | wasm only |",
            "Also cut: fn `rt` (needs `Builder::new_local`).",
        ] {
            assert!(md.contains(needle), "missing {needle:?} in\n{md}");
        }
    }
}
