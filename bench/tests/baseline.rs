//! The benchmark's tokio is the tokio users run: built without tokio's `test-util` feature,
//! whose clock takes a mutex on every read. `cargo bench --bench rpc` builds the workspace's
//! default members (the root package and `bench/`) in one feature resolve, so a
//! dev-dependency of either that turns `test-util` on (the root's did, for its paused-time
//! tests, now in `ported-tokio/`) turns it on for the benchmark too. This asks cargo which of
//! tokio's features that resolve enables, as `cargo bench` would build them.

use std::path::Path;
use std::process::Command;

#[test]
fn the_benchmarks_tokio_has_no_test_util() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).parent().unwrap();
    // No `-p`: from the root, cargo selects the default members, as `cargo bench` does.
    // Dev-dependencies are included, as for a bench build.
    let out = Command::new(env!("CARGO"))
        .current_dir(root)
        .args([
            "tree", "--edges", "features", "--invert", "tokio", "--prefix", "none",
        ])
        .output()
        .expect("cargo tree");
    assert!(
        out.status.success(),
        "cargo tree failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let tree = String::from_utf8(out.stdout).unwrap();
    // The tree lists tokio's enabled features (`tokio feature "rt"`): it must be tokio's, and
    // it must show the runtime the benchmark uses, or the check checks nothing.
    assert!(
        tree.contains("tokio feature \"rt-multi-thread\""),
        "cargo tree did not list tokio's features:\n{tree}"
    );
    assert!(
        !tree.contains("tokio feature \"test-util\""),
        "the benchmark's tokio is built with `test-util` (a dev-dependency of a default \
         member turns it on; tests that need it go in a package of their own, as \
         ported-tokio/ is):\n{tree}"
    );
}
