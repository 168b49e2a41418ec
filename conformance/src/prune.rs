//! Cutting out of a test file what does not compile: the tests (and helpers, imports) that
//! compiler errors point into, each recorded with the item the error says is missing.
//!
//! ```text
//! let mut state = Pruned::default();
//! loop {
//!     let errors = build();                       // cargo's errors for this test file
//!     if errors.is_empty() { break }
//!     let plan = plan(&texts, &errors, &state, |file| index_of(file));
//!     texts = apply(texts, &plan.edits); state.absorb(plan);
//! }
//! ```
//!
//! An error is placed at the first location of its macro chain that is in one of the test's
//! files and not inside a `macro_rules!` definition (an error in a macro's body belongs to the
//! place that calls it). The innermost unit there is cut: a test, or a helper, an import leaf,
//! a whole macro call. A cut helper's names are remembered with its missing item, so that the
//! tests failing next round for want of the helper are charged with that item, not with the
//! helper.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::Range;
use std::path::Path;

use crate::diag::{Error, Location};
use crate::missing;
use crate::source::{Kind, Seg, SourceMap, Unit};

/// Something cut out of a test file.
#[derive(Debug, Clone)]
pub(crate) struct Removed {
    pub(crate) kind: Kind,
    /// Its name; for an import leaf, the path it imported.
    pub(crate) name: String,
    pub(crate) container: Vec<Seg>,
    /// The tests it held (itself, for a test).
    pub(crate) test_names: Vec<String>,
    /// What it needed that is missing.
    pub(crate) items: BTreeSet<String>,
}

/// What was cut from one test target so far.
#[derive(Debug, Default)]
pub(crate) struct Pruned {
    pub(crate) removed: Vec<Removed>,
    /// Names of cut helpers and imports -> the items they needed.
    inherited: BTreeMap<String, BTreeSet<String>>,
}

/// One round's cuts.
#[derive(Debug, Default)]
pub(crate) struct Plan {
    /// Per file index: (byte range, replacement), not overlapping.
    pub(crate) edits: BTreeMap<usize, Vec<(Range<usize>, String)>>,
    pub(crate) removed: Vec<Removed>,
    inherited: BTreeMap<String, BTreeSet<String>>,
    /// The errors that could not be placed in any test file (their rendering).
    pub(crate) unplaced: Vec<String>,
}

/// Errors whose backticked words name something unresolved: a cut helper's name there means
/// the error is the cut's consequence.
const UNRESOLVED: &[&str] = &[
    "E0405", "E0412", "E0422", "E0423", "E0425", "E0432", "E0433", "E0531", "E0532", "E0574",
];

impl Pruned {
    /// Takes in a round's cuts.
    pub(crate) fn absorb(&mut self, plan: Plan) {
        self.removed.extend(plan.removed);
        for (name, items) in plan.inherited {
            self.inherited.entry(name).or_default().extend(items);
        }
    }

    /// The items a cut helper needed, when `error` is about that helper being gone.
    fn inherited_by(&self, error: &Error) -> Option<BTreeSet<String>> {
        let ticks = missing::backticked(&error.message);
        let unresolved = error
            .code
            .as_deref()
            .is_some_and(|c| UNRESOLVED.contains(&c))
            || error.message.starts_with("cannot find macro");
        let names: Vec<String> = if unresolved {
            ticks
                .iter()
                .flat_map(|t| t.split("::").map(str::to_string).collect::<Vec<_>>())
                .collect()
        } else if error.code.as_deref() == Some("E0599") {
            ticks
                .get(1)
                .map(|t| missing::type_name(t))
                .into_iter()
                .collect()
        } else {
            Vec::new()
        };
        let found: BTreeSet<String> = names
            .iter()
            .filter_map(|n| self.inherited.get(n))
            .flatten()
            .cloned()
            .collect();
        (!found.is_empty()).then_some(found)
    }
}

/// Where one error lands: the file, the unit chain's innermost unit, the span there.
struct Hit<'a> {
    file: usize,
    unit: &'a Unit,
    bytes: Range<usize>,
}

/// "cannot find value `x` in this scope", "use of undeclared type `X`": a bare name, not a path
/// into tokio.
fn is_unqualified_unresolved(error: &Error) -> bool {
    let unresolved = error
        .code
        .as_deref()
        .is_some_and(|c| UNRESOLVED.contains(&c));
    unresolved && (error.message.contains("in this scope") || error.message.contains("undeclared"))
}

/// Picks the place an error is charged to (see the module docs).
fn place<'a>(
    chain: &[Location],
    maps: &'a [Option<SourceMap>],
    index: &impl Fn(&Path) -> Option<usize>,
) -> Option<Hit<'a>> {
    let mut fallback = None;
    for loc in chain {
        let Some(file) = index(&loc.file) else {
            continue;
        };
        let Some(units) = maps[file].as_ref().and_then(|m| m.unit_at(loc.bytes.start)) else {
            continue;
        };
        let unit = *units.last()?;
        let hit = Hit {
            file,
            unit,
            bytes: loc.bytes.clone(),
        };
        if unit.kind == Kind::MacroRules {
            fallback.get_or_insert(hit);
            continue;
        }
        return Some(hit);
    }
    fallback
}

/// A cut being gathered: the unit, the items charged to it, the import leaves to drop.
struct Cut<'a> {
    file: usize,
    unit: &'a Unit,
    items: BTreeSet<String>,
    /// Unqualified names not found ("cannot find value `KEY` in this scope"): usually the
    /// consequence of another error in the same unit (a failed `task_local!` that was to
    /// declare `KEY`), so they count only when nothing else is charged.
    weak: BTreeSet<String>,
    leaves: BTreeSet<usize>,
    whole: bool,
}

/// The cuts for one round. `texts` are the target's files (test file first), `index` maps a
/// file name from a diagnostic to its position in `texts`.
pub(crate) fn plan(
    texts: &[String],
    errors: &[&Error],
    state: &Pruned,
    index: impl Fn(&Path) -> Option<usize>,
) -> Plan {
    let maps: Vec<Option<SourceMap>> = texts.iter().map(|t| SourceMap::parse(t).ok()).collect();
    let mut cuts: BTreeMap<(usize, usize, usize), Cut<'_>> = BTreeMap::new();
    let mut out = Plan::default();
    for error in errors {
        let inherited = state.inherited_by(error);
        let weak = inherited.is_none() && is_unqualified_unresolved(error);
        for chain in &error.locations {
            let Some(hit) = place(chain, &maps, &index) else {
                out.unplaced.push(error.rendered.clone());
                continue;
            };
            // Name the item from the error's own span when it is in a test file.
            let (text, bytes) = match chain.first().and_then(|l| Some((index(&l.file)?, l))) {
                Some((file, loc)) => (&texts[file], loc.bytes.clone()),
                None => (&texts[hit.file], hit.bytes.clone()),
            };
            let label = chain.first().and_then(|l| l.label.as_deref());
            let item = || {
                let what = missing::Said {
                    code: error.code.as_deref(),
                    message: &error.message,
                    label,
                    notes: &error.notes,
                };
                missing::name(&what, text, &bytes)
            };
            let key = (hit.file, hit.unit.range.start, hit.unit.range.end);
            let cut = cuts.entry(key).or_insert_with(|| Cut {
                file: hit.file,
                unit: hit.unit,
                items: BTreeSet::new(),
                weak: BTreeSet::new(),
                leaves: BTreeSet::new(),
                whole: false,
            });
            if hit.unit.kind == Kind::Use {
                let leaves = hit.unit.leaves_at(&hit.bytes);
                if leaves.is_empty() {
                    cut.whole = true;
                    cut.items
                        .extend(inherited.clone().unwrap_or_else(|| [item()].into()));
                }
                cut.leaves.extend(leaves);
            } else if weak {
                cut.whole = true;
                cut.weak.insert(item());
            } else {
                cut.whole = true;
                cut.items
                    .extend(inherited.clone().unwrap_or_else(|| [item()].into()));
            }
        }
    }
    for cut in cuts.values_mut() {
        if cut.items.is_empty() {
            cut.items = std::mem::take(&mut cut.weak);
        }
    }
    let cuts: Vec<Cut<'_>> = outermost(cuts.into_values().collect());
    for cut in cuts {
        let unit = cut.unit;
        if unit.kind == Kind::Use && !cut.whole {
            let drop: Vec<usize> = cut.leaves.iter().copied().collect();
            for &i in &drop {
                let leaf = &unit.leaves[i];
                let item = missing::qualify(&leaf.path);
                if leaf.name != "*" {
                    out.inherited
                        .entry(leaf.name.clone())
                        .or_default()
                        .insert(item.clone());
                }
                out.removed.push(Removed {
                    kind: Kind::Use,
                    name: item.clone(),
                    container: unit.container.clone(),
                    test_names: Vec::new(),
                    items: [item].into(),
                });
            }
            let text = unit.use_without(&drop).unwrap_or_default();
            let replacement = keep_lines(&texts[cut.file][unit.range.clone()], &text);
            out.edits
                .entry(cut.file)
                .or_default()
                .push((unit.range.clone(), replacement));
            continue;
        }
        let note = format!(
            "/* conformance: `{}` removed, needs {} */",
            unit.name,
            cut.items
                .iter()
                .cloned()
                .collect::<Vec<_>>()
                .join(", ")
                .replace("*/", "* /")
        );
        let replacement = keep_lines(&texts[cut.file][unit.range.clone()], &note);
        out.edits
            .entry(cut.file)
            .or_default()
            .push((unit.range.clone(), replacement));
        if unit.kind != Kind::Test {
            for name in defined_names(unit) {
                out.inherited
                    .entry(name)
                    .or_default()
                    .extend(cut.items.iter().cloned());
            }
        }
        let test_names = match unit.kind {
            Kind::Test => vec![unit.name.clone()],
            _ => unit.test_names.clone(),
        };
        out.removed.push(Removed {
            kind: unit.kind,
            name: unit.name.clone(),
            container: unit.container.clone(),
            test_names,
            items: cut.items,
        });
    }
    for edits in out.edits.values_mut() {
        edits.sort_by_key(|(range, _)| std::cmp::Reverse(range.start));
    }
    out
}

/// Drops the cuts inside another cut of the same file, giving their items to the outer one.
fn outermost(mut cuts: Vec<Cut<'_>>) -> Vec<Cut<'_>> {
    cuts.sort_by_key(|c| {
        (
            c.file,
            c.unit.range.start,
            std::cmp::Reverse(c.unit.range.end),
        )
    });
    let mut out: Vec<Cut<'_>> = Vec::new();
    for cut in cuts {
        match out.last_mut() {
            Some(outer) if outer.file == cut.file && cut.unit.range.end <= outer.unit.range.end => {
                outer.items.extend(cut.items);
                outer.whole = true;
            }
            _ => out.push(cut),
        }
    }
    out
}

/// The names a unit defines that other code may use: a helper's, a type's, a macro's, and
/// those of a container's non-test items.
fn defined_names(unit: &Unit) -> Vec<String> {
    let mut names = Vec::new();
    match unit.kind {
        Kind::Test | Kind::Use => {}
        Kind::MacroCall => names.extend(unit.declares.iter().cloned()),
        Kind::MacroRules => names.push(unit.name.trim_end_matches('!').to_string()),
        Kind::Fn | Kind::Other => names.push(unit.name.clone()),
        Kind::Mod | Kind::MacroBody => {
            match unit.kind {
                Kind::Mod => names.push(unit.name.clone()),
                _ => names.extend(unit.declares.iter().cloned()),
            }
            for child in &unit.children {
                names.extend(defined_names(child));
            }
        }
    }
    names
}

/// `replacement`, followed by as many newlines as `original` had, so that the lines after it
/// keep their numbers.
fn keep_lines(original: &str, replacement: &str) -> String {
    let newlines = original.matches('\n').count();
    format!("{replacement}{}", "\n".repeat(newlines))
}

/// Applies one file's edits (sorted last first, as [`plan`] leaves them).
pub(crate) fn apply(text: &str, edits: &[(Range<usize>, String)]) -> String {
    let mut text = text.to_string();
    for (range, replacement) in edits {
        text.replace_range(range.clone(), replacement);
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::PathBuf;

    const FILE: &str = r#"use tokio::{net::TcpListener, task::LocalSet};
use tokio::runtime::Runtime;

fn rt() -> Runtime { tokio::runtime::Builder::new_local().build().unwrap() }

#[test]
fn uses_helper() {
    rt().block_on(async {});
}

#[tokio::test]
async fn local() {
    LocalSet::new();
}

#[tokio::test]
async fn fine() {
    TcpListener::bind("127.0.0.1:0").await.unwrap();
}

macro_rules! check { ($s:expr) => { $s.peek() }; }

#[tokio::test]
async fn peeks() {
    let s = 1;
    check!(s);
}
"#;

    fn error(code: &str, message: &str, chain: &[(&str, &str)]) -> Error {
        let text = FILE;
        let chain = chain
            .iter()
            .map(|(file, needle)| {
                let start = text.find(needle).unwrap();
                Location {
                    file: PathBuf::from(file),
                    bytes: start..start + needle.len(),
                    label: None,
                }
            })
            .collect();
        Error {
            target: "t".into(),
            code: Some(code.into()),
            message: message.into(),
            locations: vec![chain],
            notes: Vec::new(),
            rendered: message.into(),
        }
    }

    fn index(path: &Path) -> Option<usize> {
        (path == Path::new("t.rs")).then_some(0)
    }

    #[test]
    fn cuts_tests_helpers_and_import_leaves_and_charges_the_right_item() {
        let mut state = Pruned::default();
        let errors = [
            error("E0432", "unresolved import `tokio::task::LocalSet`", &[("t.rs", "LocalSet}")]),
            error(
                "E0599",
                "no function or associated item named `new_local` found for struct `Builder` in the current scope",
                &[("t.rs", "new_local")],
            ),
            // In a local macro's body: charged to the test that calls it.
            error(
                "E0599",
                "no method named `peek` found for type `{integer}` in the current scope",
                &[("t.rs", "peek()"), ("t.rs", "check!(s)")],
            ),
            // Nowhere in the test's files.
            error("E0308", "mismatched types", &[("elsewhere.rs", "fn")]),
        ];
        let refs: Vec<&Error> = errors.iter().collect();
        let plan1 = plan(&[FILE.to_string()], &refs, &state, index);
        assert_eq!(plan1.unplaced, ["mismatched types"]);
        let text = apply(FILE, &plan1.edits[&0]);
        assert_eq!(
            text.lines().count(),
            FILE.lines().count(),
            "line numbers are kept"
        );
        assert!(text.contains("TcpListener") && !text.contains("task::LocalSet"));
        assert!(!text.contains("fn rt()") && !text.contains("async fn peeks"));
        let names: Vec<_> = plan1
            .removed
            .iter()
            .map(|r| (r.kind, r.name.clone()))
            .collect();
        assert!(names.contains(&(Kind::Use, "tokio::task::LocalSet".into())));
        assert!(names.contains(&(Kind::Fn, "rt".into())));
        let peeks = plan1.removed.iter().find(|r| r.name == "peeks").unwrap();
        assert_eq!(peeks.test_names, ["peeks"]);
        assert_eq!(peeks.items, ["{integer}::peek".to_string()].into());
        state.absorb(plan1);

        // Next round: the tests that used the cut helper and import.
        let errors = [
            error("E0425", "cannot find function `rt` in this scope", &[("t.rs", "rt().block_on")]),
            // Only a consequence of the other error in `fine`: not charged.
            error("E0425", "cannot find value `x` in this scope", &[("t.rs", "TcpListener::bind")]),
            error("E0599", "no function or associated item named `bind` found for struct `TcpListener` in the current scope", &[("t.rs", "bind(")]),
            error("E0433", "failed to resolve: use of undeclared type `LocalSet`", &[("t.rs", "LocalSet::new")]),
        ];
        let refs: Vec<&Error> = errors.iter().collect();
        let plan2 = plan(&[FILE.to_string()], &refs, &state, index);
        let by_name: BTreeMap<_, _> = plan2
            .removed
            .iter()
            .map(|r| (r.name.as_str(), r.items.clone()))
            .collect();
        assert_eq!(
            by_name["uses_helper"],
            ["Builder::new_local".to_string()].into()
        );
        assert_eq!(
            by_name["local"],
            ["tokio::task::LocalSet".to_string()].into()
        );
        assert_eq!(by_name["fine"], ["TcpListener::bind".to_string()].into());
    }

    #[test]
    fn a_cut_inside_another_goes_with_it() {
        let body = "m! {\n    #[test]\n    fn a() { x(); }\n}\n";
        let e = |needle: &str| {
            let start = body.find(needle).unwrap();
            Error {
                target: "t".into(),
                code: Some("E0425".into()),
                message: format!("cannot find function `{needle}` in this scope"),
                locations: vec![vec![Location {
                    file: PathBuf::from("t.rs"),
                    bytes: start..start + needle.len(),
                    label: None,
                }]],
                notes: Vec::new(),
                rendered: String::new(),
            }
        };
        let errors = [e("x"), e("m")];
        let refs: Vec<&Error> = errors.iter().collect();
        let plan = plan(&[body.to_string()], &refs, &Pruned::default(), index);
        assert_eq!(plan.removed.len(), 1);
        assert_eq!(plan.removed[0].kind, Kind::MacroBody);
        assert_eq!(plan.removed[0].test_names, ["a"]);
        assert_eq!(plan.removed[0].items.len(), 2);
    }
}
