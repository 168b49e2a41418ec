//! The executor's source keeps its layers: each folder of `src/` imports only from the folders
//! below it, and what the scheduler's shared state owns never imports that state back. Read
//! from the source files themselves, so a new import that breaks a layer fails here (`lib.rs`
//! lists the layers and why).

use std::fs;
use std::path::{Path, PathBuf};

/// The folders of `src/`, each with the folders it may import from (besides itself).
const LAYERS: &[(&str, &[&str])] = &[
    ("idle", &[]),
    ("time", &[]),
    ("task", &["idle"]),
    ("local", &["task"]),
    ("scheduler", &["idle", "task", "time"]),
    ("runtime", &["idle", "local", "scheduler", "task", "time"]),
];

/// Files owned by the scheduler's `Shared` (fields of it, or parts of those), which must not
/// name `Shared`: ownership runs one way.
const OWNED_BY_SHARED: &[&str] = &[
    "scheduler/blocking.rs",
    "scheduler/driver_cell.rs",
    "scheduler/foreign_context.rs",
    "scheduler/identity.rs",
    "scheduler/lifo.rs",
    "scheduler/metrics.rs",
    "scheduler/queues.rs",
    "scheduler/seat.rs",
    "task/list.rs",
    "time/paused.rs",
];

fn src() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("src")
}

/// Every `.rs` file under `dir`, as paths relative to `src/`.
fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path.strip_prefix(src()).unwrap().to_path_buf());
        }
    }
}

/// The file's code without its comments (doc examples name other layers freely).
fn code(rel: &Path) -> String {
    let text = fs::read_to_string(src().join(rel)).unwrap();
    text.lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The top-level modules `code` reaches with a `crate::name` path.
fn crate_paths(code: &str) -> Vec<String> {
    code.match_indices("crate::")
        .map(|(i, m)| {
            code[i + m.len()..]
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_')
                .collect()
        })
        .collect()
}

#[test]
fn each_folder_imports_only_from_the_layers_below_it() {
    let mut files = Vec::new();
    rust_files(&src(), &mut files);
    assert!(files.len() > 20, "found only {files:?}");
    let mut broken = Vec::new();
    for rel in &files {
        let Some(folder) = rel.iter().next().and_then(|f| f.to_str()) else {
            continue;
        };
        let Some((_, allowed)) = LAYERS.iter().find(|(name, _)| *name == folder) else {
            continue; // lib.rs and driver.rs, the crate's top, may use anything
        };
        for target in crate_paths(&code(rel)) {
            let known = LAYERS.iter().any(|(name, _)| *name == target) || target == "driver";
            if known && target != folder && !allowed.contains(&target.as_str()) {
                broken.push(format!("{} uses crate::{target}", rel.display()));
            }
        }
    }
    assert!(broken.is_empty(), "layer violations: {broken:#?}");
}

#[test]
fn what_the_shared_state_owns_never_names_it() {
    let mut broken = Vec::new();
    for rel in OWNED_BY_SHARED {
        let code = code(Path::new(rel));
        if code.contains("Shared") {
            broken.push(rel.to_string());
        }
    }
    assert!(
        broken.is_empty(),
        "these import the state that owns them: {broken:?}"
    );
}

#[test]
fn the_folders_listed_here_are_the_ones_in_src() {
    let mut dirs: Vec<String> = fs::read_dir(src())
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.is_dir())
        .map(|p| p.file_name().unwrap().to_str().unwrap().to_string())
        .collect();
    dirs.sort();
    let mut listed: Vec<String> = LAYERS.iter().map(|(n, _)| n.to_string()).collect();
    listed.sort();
    assert_eq!(dirs, listed, "a folder of src/ has no layer in this test");
}
