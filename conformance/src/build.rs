//! Building the suite: round after round, build tokio's test files against the shim and cut
//! what the compiler's errors point into; and listing the tests tokio's own build of a file has.
//!
//! ```text
//! let built = compile(&layout, &files)?;                 // executables, cuts, failures
//! let lists = reference_lists(&layout, &inputs)?;        // file -> tokio's test names
//! ```
//!
//! A round builds every file still failing (all of them the first time) with
//! `cargo build --keep-going`, groups the errors by file, and has [`crate::prune`] plan the
//! cuts, which are written into the generated copies. A file whose errors cannot be placed in
//! it, or that still fails after [`MAX_ROUNDS`], counts as not building at all. tokio's own
//! lists come from building the untouched files against the real tokio, once per tokio
//! version and text of the generated file (they are cached beside the generated workspace,
//! each with a fingerprint of the text it was listed from).

use std::collections::BTreeMap;
use std::fs;
use std::path::{Path, PathBuf};

use crate::generate::{self, Inputs, Layout};
use crate::{cargo, diag, prune};

/// How many build-and-cut rounds a file gets before it counts as not building at all.
pub(crate) const MAX_ROUNDS: usize = 12;

/// One test file's build state.
#[derive(Debug, Default)]
pub(crate) struct TargetState {
    /// Its files: the test file first, then its support files.
    files: Vec<PathBuf>,
    pub(crate) pruned: prune::Pruned,
    /// Why it does not build at all, if so.
    pub(crate) failure: Option<String>,
}

#[derive(Debug)]
pub(crate) struct Built {
    pub(crate) states: BTreeMap<String, TargetState>,
    pub(crate) executables: BTreeMap<String, PathBuf>,
}

/// Builds the suite, cutting what does not compile, round after round.
pub(crate) fn compile(layout: &Layout, files: &[String]) -> Result<Built, String> {
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
pub(crate) fn reference_lists(
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
    // Each list is kept with a fingerprint of the text it was built from: a list made before
    // the harness generated the file as it does now (before the checks became tests, say)
    // would leave the cut tests out of the counts.
    let mut fingerprints = BTreeMap::new();
    for file in inputs.files {
        let text = generate::test_text(inputs, file)
            .map_err(|e| format!("reading tokio's {file}: {e}"))?;
        fingerprints.insert(file.clone(), fingerprint(&text));
    }
    let missing: Vec<String> = inputs
        .files
        .iter()
        .filter(|f| cache["lists"][f.as_str()]["source"].as_str() != Some(&fingerprints[*f]))
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
            cache["lists"][file.as_str()] =
                serde_json::json!({ "source": fingerprints[file], "tests": tests });
        }
        fs::write(&cache_path, cache.to_string())
            .map_err(|e| format!("{}: {e}", cache_path.display()))?;
    }
    Ok(inputs
        .files
        .iter()
        .map(|f| {
            let list = cache["lists"][f.as_str()]["tests"]
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

/// A short fingerprint of a generated test file's text, to tell a stale list (see
/// [`reference_lists`]). std's hasher may change between Rust releases: that only makes the
/// harness list tokio's tests once more.
fn fingerprint(text: &str) -> String {
    use std::hash::{DefaultHasher, Hash, Hasher};
    let mut hasher = DefaultHasher::new();
    text.hash(&mut hasher);
    format!("{:016x}", hasher.finish())
}
