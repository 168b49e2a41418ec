//! Calling cargo: where tokio's package is, building test targets, listing a binary's tests.
//!
//! ```text
//! let found = tokio_package(&repo)?;              // version and directory, via cargo metadata
//! let out = build_tests(&suite_manifest, &target_dir, &["rt_common"])?;
//! ```
//!
//! tokio is found through `cargo metadata` on the repository: the `tokio` that the
//! `conformance` package depends on, which cargo downloads (its package ships `tests/`) and
//! the repository's Cargo.lock pins.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use serde_json::Value;

use crate::diag::Messages;
use crate::libtest;

/// The cargo that runs this program, or `cargo`.
fn cargo() -> Command {
    Command::new(std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into()))
}

/// tokio's package: its version and the directory with its `tests/`.
#[derive(Debug, Clone)]
pub(crate) struct Tokio {
    pub(crate) version: String,
    pub(crate) dir: PathBuf,
}

/// The repository's target directory and the tokio the harness depends on.
pub(crate) fn metadata(repo: &Path) -> Result<(PathBuf, Tokio), String> {
    let out = cargo()
        .args(["metadata", "--format-version", "1", "--manifest-path"])
        .arg(repo.join("Cargo.toml"))
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| format!("cargo metadata: {e}"))?;
    if !out.status.success() {
        return Err(format!("cargo metadata failed ({})", out.status));
    }
    let meta: Value =
        serde_json::from_slice(&out.stdout).map_err(|e| format!("cargo metadata: {e}"))?;
    let target_dir = PathBuf::from(meta["target_directory"].as_str().unwrap_or("target"));
    let tokio =
        find_tokio(&meta).ok_or("cargo metadata: no tokio among conformance's dependencies")?;
    Ok((target_dir, tokio))
}

/// The `tokio` package the `conformance` package's resolve node points at.
fn find_tokio(meta: &Value) -> Option<Tokio> {
    let packages = meta["packages"].as_array()?;
    let conformance = packages.iter().find(|p| p["name"] == "conformance")?;
    let node = meta["resolve"]["nodes"]
        .as_array()?
        .iter()
        .find(|n| n["id"] == conformance["id"])?;
    let dep = node["deps"]
        .as_array()?
        .iter()
        .find(|d| d["name"] == "tokio")?;
    let package = packages.iter().find(|p| p["id"] == dep["pkg"])?;
    let manifest = PathBuf::from(package["manifest_path"].as_str()?);
    Some(Tokio {
        version: package["version"].as_str()?.to_string(),
        dir: manifest.parent()?.to_path_buf(),
    })
}

/// Builds test targets of the package at `manifest` (all of them when `tests` is empty),
/// going on past targets that fail, and returns cargo's messages.
pub(crate) fn build_tests(
    manifest: &Path,
    target_dir: &Path,
    tests: &[String],
) -> Result<Messages, String> {
    let mut cmd = cargo();
    cmd.args(["build", "--keep-going", "--message-format=json"])
        .arg("--manifest-path")
        .arg(manifest)
        .arg("--target-dir")
        .arg(target_dir);
    if tests.is_empty() {
        cmd.arg("--tests");
    }
    for test in tests {
        cmd.args(["--test", test]);
    }
    let out = cmd
        .stderr(Stdio::piped())
        .output()
        .map_err(|e| format!("cargo build: {e}"))?;
    let messages = Messages::parse(&String::from_utf8_lossy(&out.stdout));
    let stderr = String::from_utf8_lossy(&out.stderr);
    // Compile errors in test files are expected; a failure before any compiling (resolution,
    // a dependency that does not build) is not.
    if !out.status.success() && messages.errors.is_empty() && messages.executables.is_empty() {
        return Err(format!(
            "cargo build of {} failed:\n{stderr}",
            manifest.display()
        ));
    }
    Ok(messages)
}

/// The tests in a test binary, and which of them are `#[ignore]`d.
pub(crate) fn list_tests(exe: &Path) -> Result<(Vec<String>, Vec<String>), String> {
    let run = |ignored: bool| {
        let mut cmd = Command::new(exe);
        cmd.args(["--list", "--format", "terse"]);
        if ignored {
            cmd.arg("--ignored");
        }
        let out = cmd
            .stderr(Stdio::null())
            .output()
            .map_err(|e| format!("{}: {e}", exe.display()))?;
        Ok::<_, String>(libtest::list(&String::from_utf8_lossy(&out.stdout)))
    };
    Ok((run(false)?, run(true)?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_tokio_conformance_depends_on() {
        let meta = serde_json::json!({
            "packages": [
                {"name": "conformance", "id": "c", "version": "0.1.0", "manifest_path": "/r/conformance/Cargo.toml"},
                {"name": "tokio", "id": "t1", "version": "1.54.1", "manifest_path": "/reg/tokio-1.54.1/Cargo.toml"},
                {"name": "tokio", "id": "t0", "version": "0.2.0", "manifest_path": "/reg/tokio-0.2.0/Cargo.toml"}
            ],
            "resolve": {"nodes": [
                {"id": "c", "deps": [{"name": "serde_json", "pkg": "s"}, {"name": "tokio", "pkg": "t1"}]}
            ]}
        });
        let tokio = find_tokio(&meta).unwrap();
        assert_eq!(tokio.version, "1.54.1");
        assert_eq!(tokio.dir, PathBuf::from("/reg/tokio-1.54.1"));
    }
}
