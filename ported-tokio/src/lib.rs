//! Nothing here: the package is its test, `tests/ported_tokio.rs`, kept out of the root
//! package so that tokio's `test-util` feature, which it needs, never reaches the tokio the
//! benchmarks build (see `Cargo.toml`).
