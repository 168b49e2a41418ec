//! spinpark's RPC benchmark harness lives in this crate's `benches/rpc/main.rs` (run it from the
//! workspace root with `cargo bench --bench rpc`; `-- --help` lists its modes). This library
//! tells the harness where the workspace is, for the files it reads and writes there
//! (`docs/`, `README.md`, `target/spinpark-bench/`) and the examples it builds, and draws its
//! charts ([`plot`], here so that its tests run with the workspace's).
//!
//! ```
//! assert!(spinpark_bench::workspace_root().join("Cargo.toml").exists());
//! ```

use std::path::Path;

pub mod plot;

/// The workspace's root directory (this crate's parent).
pub fn workspace_root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("the bench crate lives in the workspace root")
}
