//! Compile-time behaviour of the attributes: `tests/ui/*.rs` must fail to
//! compile with the errors in their `.stderr` files, and `tests/ui-pass/*.rs`
//! must compile and run. Regenerate the `.stderr` files with
//! `TRYBUILD=overwrite cargo test --test ui`.

#[test]
fn ui() {
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*.rs");
    t.pass("tests/ui-pass/*.rs");
}
