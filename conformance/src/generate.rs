//! Writes the cargo workspaces the harness builds, under `target/conformance/`.
//!
//! ```text
//! target/conformance/
//!   Cargo.toml, Cargo.lock     the workspace: shim + suite (the lock copied from the repo)
//!   shim/                      package `spinpark-tokio-shim`: conformance/shim/lib.rs
//!   suite/                     tokio's test files, one [[test]] each, `tokio` = the shim
//!     tests/rt_common/rt_common.rs, tests/rt_common/support/...
//!   reference/                 the same files against the real tokio, only to list their tests
//!   target/                    both workspaces' build directory
//! ```
//!
//! Each test file gets a directory of its own with a copy of tokio's `tests/support/`, so that
//! cutting a broken helper out of one file's support module leaves the others' alone. The
//! suite and the reference crate declare tokio's feature names (`full`, `rt`, `net`, ...) as
//! empty features, all on, so the files' `#![cfg(feature = "full")]` gates hold as in tokio's
//! own CI. Repository files are only read; tokio's files are only copied here (the file of
//! compile-time checks with each check wrapped in a test function: [`crate::checks`]).

use std::fs;
use std::io;
use std::path::{Path, PathBuf};

use crate::checks;

/// The shim's source, kept in the repository as a Rust file.
const SHIM: &str = include_str!("../shim/lib.rs");

/// The crates the selected test files use besides tokio: tokio's dev-dependencies, and two of
/// its own dependencies that its tests name (`bytes`, `pin-project-lite`). The versions are the
/// ones locked in the repository (conformance/Cargo.toml lists the same crates).
pub(crate) const DEV_DEPENDENCIES: &[(&str, &str)] = &[
    ("bytes", r#""1""#),
    ("pin-project-lite", r#""0.2""#),
    ("tokio-test", r#""0.4""#),
    ("tokio-stream", r#""0.1""#),
    (
        "futures",
        r#"{ version = "0.3", features = ["async-await"] }"#,
    ),
    ("futures-test", r#""0.3""#),
    ("tempfile", r#""3""#),
    (
        "nix",
        r#"{ version = "0.31", default-features = false, features = ["fs", "socket"] }"#,
    ),
    ("socket2", r#""0.6""#),
    ("rand", r#""0.9""#),
    ("libc", r#""0.2""#),
];

/// tokio's features, declared (empty) by the suite so that tokio's `cfg(feature = ..)` gates
/// see the set tokio's tests run with: `full` and `test-util`.
const FEATURES: &str = r#"[features]
default = ["full", "test-util"]
full = ["fs", "io-util", "io-std", "macros", "net", "parking_lot", "process", "rt", "rt-multi-thread", "signal", "sync", "time"]
fs = []
io-util = []
io-std = []
macros = []
net = []
parking_lot = []
process = []
rt = []
rt-multi-thread = []
signal = []
sync = []
time = []
test-util = []
"#;

/// Where everything goes.
#[derive(Debug, Clone)]
pub(crate) struct Layout {
    pub(crate) root: PathBuf,
}

impl Layout {
    pub(crate) fn suite(&self) -> PathBuf {
        self.root.join("suite")
    }
    pub(crate) fn reference(&self) -> PathBuf {
        self.root.join("reference")
    }
    pub(crate) fn target_dir(&self) -> PathBuf {
        self.root.join("target")
    }
    pub(crate) fn logs(&self) -> PathBuf {
        self.root.join("logs")
    }
    /// A test file's directory inside a crate (`suite` or `reference`).
    pub(crate) fn test_dir(&self, krate: &Path, file: &str) -> PathBuf {
        krate.join("tests").join(file)
    }
    /// A test file's main source inside a crate.
    pub(crate) fn test_file(&self, krate: &Path, file: &str) -> PathBuf {
        self.test_dir(krate, file).join(format!("{file}.rs"))
    }
}

/// What the generated manifests point at.
#[derive(Debug, Clone)]
pub(crate) struct Inputs<'a> {
    /// The spinpark repository (its root manifest's directory).
    pub(crate) repo: &'a Path,
    /// tokio's version and its `tests/` directory.
    pub(crate) tokio_version: &'a str,
    pub(crate) tokio_tests: &'a Path,
    pub(crate) files: &'a [String],
}

/// Writes the suite workspace (shim + suite) with fresh copies of the test files.
pub(crate) fn suite(layout: &Layout, inputs: &Inputs<'_>) -> io::Result<()> {
    let root = &layout.root;
    fs::create_dir_all(root)?;
    write(
        &root.join("Cargo.toml"),
        "[workspace]\nmembers = [\"shim\", \"suite\"]\nexclude = [\"reference\"]\nresolver = \"2\"\n",
    )?;
    copy(&inputs.repo.join("Cargo.lock"), &root.join("Cargo.lock"))?;

    let repo = toml_path(inputs.repo);
    let shim = root.join("shim");
    write(
        &shim.join("Cargo.toml"),
        &format!(
            r#"[package]
name = "spinpark-tokio-shim"
version = "0.0.0"
edition = "2021"
publish = false

[lib]
path = "src/lib.rs"

[dependencies]
spinpark = {{ path = {repo}, features = ["tokio-io", "test-util", "sync"] }}
real_tokio = {{ package = "tokio", version = "={version}", default-features = false, features = ["sync", "io-util", "macros"] }}
"#,
            version = inputs.tokio_version
        ),
    )?;
    write(&shim.join("src/lib.rs"), SHIM)?;

    let tokio = r#"{ package = "spinpark-tokio-shim", path = "../shim" }"#.to_string();
    // The attributes expand to `::spinpark::Builder`: the suite names spinpark itself too.
    let spinpark = format!(r#"{{ path = {repo}, features = ["tokio-io", "test-util", "sync"] }}"#);
    test_crate(
        layout,
        &layout.suite(),
        "conformance-suite",
        &tokio,
        Some(&spinpark),
        inputs,
    )
}

/// Writes the reference workspace: the same test files against the real tokio.
pub(crate) fn reference(layout: &Layout, inputs: &Inputs<'_>) -> io::Result<()> {
    let dir = layout.reference();
    fs::create_dir_all(&dir)?;
    copy(&inputs.repo.join("Cargo.lock"), &dir.join("Cargo.lock"))?;
    let tokio = format!(
        r#"{{ version = "={}", features = ["full", "test-util"] }}"#,
        inputs.tokio_version
    );
    test_crate(layout, &dir, "conformance-reference", &tokio, None, inputs)
}

fn test_crate(
    layout: &Layout,
    dir: &Path,
    name: &str,
    tokio: &str,
    spinpark: Option<&str>,
    inputs: &Inputs<'_>,
) -> io::Result<()> {
    // tokio's `homepage`, as in tokio's own manifest: `rt_handle_block_on`'s `basic_fs` reads
    // the test crate's `Cargo.toml` and looks for it.
    let mut manifest = format!(
        "[package]\nname = \"{name}\"\nversion = \"0.0.0\"\nedition = \"2021\"\npublish = false\n\
         homepage = \"https://tokio.rs\"\nautotests = false\nautobenches = false\n\n"
    );
    if name == "conformance-reference" {
        manifest.push_str("[workspace]\n\n");
    }
    manifest.push_str(FEATURES);
    manifest.push_str("\n[dev-dependencies]\n");
    manifest.push_str(&format!("tokio = {tokio}\n"));
    if let Some(spinpark) = spinpark {
        manifest.push_str(&format!("spinpark = {spinpark}\n"));
    }
    for (dep, spec) in DEV_DEPENDENCIES {
        manifest.push_str(&format!("{dep} = {spec}\n"));
    }
    manifest.push_str("\n[lints.rust]\nunexpected_cfgs = \"allow\"\n");
    // Directories of files no longer selected go; the others are rewritten only where they
    // differ from tokio's (a previous run's cuts), so cargo rebuilds only those.
    let tests = dir.join("tests");
    if tests.is_dir() {
        for entry in fs::read_dir(&tests)? {
            let entry = entry?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if !inputs.files.contains(&name) {
                fs::remove_dir_all(entry.path())?;
            }
        }
    }
    for file in inputs.files {
        manifest.push_str(&format!(
            "\n[[test]]\nname = \"{file}\"\npath = \"tests/{file}/{file}.rs\"\n"
        ));
        let to = layout.test_dir(dir, file);
        fs::create_dir_all(&to)?;
        write(&layout.test_file(dir, file), &test_text(inputs, file)?)?;
        copy_dir(&inputs.tokio_tests.join("support"), &to.join("support"))?;
    }
    write(&dir.join("Cargo.toml"), &manifest)?;
    fs::create_dir_all(dir.join("src"))?;
    write(&dir.join("src/lib.rs"), "")
}

/// The text a generated crate gets for tokio's test `file`: tokio's own, or, for the
/// compile-time checks, with each check wrapped in a test (see `checks`).
pub(crate) fn test_text(inputs: &Inputs<'_>, file: &str) -> io::Result<String> {
    let from = inputs.tokio_tests.join(format!("{file}.rs"));
    let text = fs::read_to_string(&from)?;
    if checks::FILES.contains(&file) {
        checks::wrap(&text)
            .ok_or_else(|| io::Error::other(format!("{} does not parse", from.display())))
    } else {
        Ok(text)
    }
}

/// A path as a TOML string.
fn toml_path(path: &Path) -> String {
    toml::Value::String(path.display().to_string()).to_string()
}

fn write(path: &Path, text: &str) -> io::Result<()> {
    if let Some(dir) = path.parent() {
        fs::create_dir_all(dir)?;
    }
    // Leave unchanged files alone, so cargo does not rebuild what did not change.
    if fs::read_to_string(path).is_ok_and(|old| old == text) {
        return Ok(());
    }
    fs::write(path, text)
}

/// Copies a file unless the destination already holds the same bytes.
fn copy(from: &Path, to: &Path) -> io::Result<()> {
    let bytes = fs::read(from)?;
    if fs::read(to).is_ok_and(|old| old == bytes) {
        return Ok(());
    }
    fs::write(to, bytes)
}

fn copy_dir(from: &Path, to: &Path) -> io::Result<()> {
    if !from.is_dir() {
        return Ok(());
    }
    fs::create_dir_all(to)?;
    for entry in fs::read_dir(from)? {
        let entry = entry?;
        let target = to.join(entry.file_name());
        if entry.file_type()?.is_dir() {
            copy_dir(&entry.path(), &target)?;
        } else {
            copy(&entry.path(), &target)?;
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The suite's dependencies are the ones conformance/Cargo.toml locks.
    #[test]
    fn dev_dependencies_are_locked_by_the_harness_manifest() {
        let manifest: toml::Table = include_str!("../Cargo.toml").parse().unwrap();
        let locked = manifest["target"]["cfg(any())"]["dependencies"]
            .as_table()
            .unwrap();
        for (dep, _) in DEV_DEPENDENCIES {
            assert!(
                locked.contains_key(*dep),
                "{dep} is not in conformance/Cargo.toml"
            );
        }
        assert!(locked.contains_key("tokio"));
    }

    #[test]
    fn writes_a_suite_with_one_target_per_file() {
        let tmp = std::env::temp_dir().join(format!("conformance-gen-{}", std::process::id()));
        let (repo, tokio_tests) = (tmp.join("repo"), tmp.join("tokio/tests"));
        fs::create_dir_all(tokio_tests.join("support")).unwrap();
        fs::create_dir_all(&repo).unwrap();
        fs::write(repo.join("Cargo.lock"), "# lock\n").unwrap();
        fs::write(tokio_tests.join("rt_basic.rs"), "#[test] fn a() {}\n").unwrap();
        fs::write(
            tokio_tests.join("support/panic.rs"),
            "pub(crate) fn p() {}\n",
        )
        .unwrap();
        let layout = Layout {
            root: tmp.join("out"),
        };
        let files = ["rt_basic".to_string()];
        let inputs = Inputs {
            repo: &repo,
            tokio_version: "1.54.1",
            tokio_tests: &tokio_tests,
            files: &files,
        };
        suite(&layout, &inputs).unwrap();
        let manifest = fs::read_to_string(layout.suite().join("Cargo.toml")).unwrap();
        let parsed: toml::Table = manifest.parse().unwrap();
        assert_eq!(
            parsed["test"][0]["path"].as_str(),
            Some("tests/rt_basic/rt_basic.rs")
        );
        assert_eq!(
            parsed["dev-dependencies"]["tokio"]["package"].as_str(),
            Some("spinpark-tokio-shim")
        );
        assert!(layout
            .suite()
            .join("tests/rt_basic/support/panic.rs")
            .exists());
        let shim: toml::Table = fs::read_to_string(layout.root.join("shim/Cargo.toml"))
            .unwrap()
            .parse()
            .unwrap();
        assert_eq!(
            shim["dependencies"]["real_tokio"]["version"].as_str(),
            Some("=1.54.1")
        );
        // `tokio::sync` in the shim is `spinpark::sync`.
        let features = shim["dependencies"]["spinpark"]["features"]
            .as_array()
            .unwrap();
        assert!(features.iter().any(|f| f.as_str() == Some("sync")));
        fs::remove_dir_all(&tmp).unwrap();
    }
}
