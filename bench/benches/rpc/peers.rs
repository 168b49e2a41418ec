//! The io_uring peer servers' binary (`bench/peers`: monoio, glommio and compio echo servers),
//! for `--only pipelined`.
//!
//! ```text
//! let exe = peers::binary(opts.peers.as_deref(), &progress)?; // built on first use
//! let cmd = peers::command(&exe, "monoio");                  // a server for Server::launch
//! ```
//!
//! The crate lives outside the workspace (the root `Cargo.toml` excludes it), so neither the
//! README's commands nor CI compile those runtimes: this module builds it only when the mode
//! runs, with `cargo build --release --locked --manifest-path bench/peers/Cargo.toml
//! --target-dir target/peers` (its own `Cargo.lock`, its own target directory), unless
//! `--peers PATH` names a binary already built. A failed build is an error with cargo's last
//! lines, which the mode prints in place of the peers' rows.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use crate::runner::Progress;
use spinpark_bench::workspace_root;

/// The peer servers the binary runs, by the name it takes.
pub const RUNTIMES: [&str; 3] = ["monoio", "glommio", "compio"];

/// The peers' binary: `given`, or the one cargo builds (or finds up to date).
pub fn binary(given: Option<&Path>, progress: &Progress) -> Result<PathBuf, String> {
    if let Some(path) = given {
        return match path.is_file() {
            true => Ok(path.to_path_buf()),
            false => Err(format!("--peers {}: no such file", path.display())),
        };
    }
    let manifest = workspace_root().join("bench/peers/Cargo.toml");
    let target = std::env::var_os("CARGO_TARGET_DIR")
        .map(PathBuf::from)
        .unwrap_or_else(|| workspace_root().join("target"))
        .join("peers");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    progress.line(&format!(
        "building the io_uring peers: cargo build --release --locked --manifest-path {} --target-dir {}",
        manifest.display(),
        target.display()
    ));
    let out = Command::new(cargo)
        .args(["build", "--release", "--locked", "--manifest-path"])
        .arg(&manifest)
        .arg("--target-dir")
        .arg(&target)
        .stdin(Stdio::null())
        .output()
        .map_err(|e| format!("cannot run cargo: {e}"))?;
    if !out.status.success() {
        let err = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = err.lines().filter(|l| !l.trim().is_empty()).collect();
        let tail = tail[tail.len().saturating_sub(3)..].join(" / ");
        return Err(format!(
            "building bench/peers failed ({}): {tail}",
            out.status
        ));
    }
    let exe = target.join("release/spinpark-peers");
    match exe.is_file() {
        true => Ok(exe),
        false => Err(format!("cargo built no {}", exe.display())),
    }
}

/// The command that runs the peer server `runtime` (one of [`RUNTIMES`]).
pub fn command(exe: &Path, runtime: &str) -> Command {
    let mut cmd = Command::new(exe);
    cmd.arg(runtime);
    cmd
}
