//! Compile-time behaviour of the attributes: `tests/ui/*.rs` must fail to
//! compile with the errors in their `.stderr` files, and `tests/ui-pass/*.rs`
//! must compile and run. `start_paused` depends on spinpark's `test-util`
//! feature: `tests/ui-test-util` (errors) and `tests/ui-pass-test-util` with
//! it, `tests/ui-no-test-util` without. Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test --test ui`, with and without
//! `--features test-util`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui-pass/*.rs");
    if cfg!(feature = "test-util") {
        t.compile_fail("tests/ui-test-util/*.rs");
        t.pass("tests/ui-pass-test-util/*.rs");
    } else {
        t.compile_fail("tests/ui-no-test-util/*.rs");
    }
}
