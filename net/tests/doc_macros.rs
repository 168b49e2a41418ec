//! House rule: public items' docs are written out, not assembled by a macro
//! (`#[doc = concat!(...)]`), so that readers and `grep` find them. Scans the sources of
//! every crate of the workspace.

use std::path::{Path, PathBuf};

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

#[test]
fn no_doc_comment_is_assembled_with_concat() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    let mut files = Vec::new();
    for krate in ["src", "net/src", "executor/src", "macros/src"] {
        rust_files(&root.join(krate), &mut files);
    }
    assert!(
        files.len() > 20,
        "sources not found under {}",
        root.display()
    );
    // Spaces aside, so that `#[doc=concat!(` is found too.
    let needle = "#[doc=concat!(";
    let offenders: Vec<String> = files
        .iter()
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            text.split_whitespace().collect::<String>().contains(needle)
        })
        .map(|f| f.display().to_string())
        .collect();
    assert!(
        offenders.is_empty(),
        "docs assembled with concat! in {offenders:?}"
    );
}
