//! The forms of `#[spinpark::main]` and `#[spinpark::test]` that tokio's own macro tests
//! use (`tests/macros_test.rs`, `tests/macros_rename_test.rs`): as a `use`d name, on a
//! method, on functions returning `!` or a `Result` that panic, under lints that user code
//! denies, from inside `macro_rules!`, with `name` and `crate`.

#![allow(clippy::let_unit_value)]

use spinpark::test;

async fn compute() -> usize {
    spinpark::spawn(async { 1 }).await.unwrap()
}

#[test]
async fn test_macro_can_be_used_via_use() {
    assert_eq!(compute().await, 1);
}

#[spinpark::test]
async fn test_macro_is_resilient_to_shadowing() {
    assert_eq!(compute().await, 1);
}

// No `unused_braces` warning from a one-line body (the file is linted with -D warnings).
#[rustfmt::skip]
#[spinpark::main]
pub async fn unused_braces_main() { println!("hello") }
#[rustfmt::skip]
#[spinpark::test]
async fn unused_braces_test() { assert_eq!(1 + 1, 2) }

/// `#[spinpark::main]` on a method taking `self`, in a trait impl.
#[std::prelude::v1::test]
fn on_a_trait_method() {
    trait A {
        fn f(self) -> usize;
        fn g(self) -> usize;
    }
    impl A for usize {
        #[spinpark::main]
        async fn f(self) -> usize {
            self.g() + compute().await
        }

        fn g(self) -> usize {
            self * 10
        }
    }
    assert_eq!(4.f(), 41);
}

/// And on inherent methods, with `&self` and with arguments (only a function named `main`
/// may not take any).
#[std::prelude::v1::test]
fn on_inherent_methods_with_arguments() {
    struct S(usize);
    impl S {
        #[spinpark::main(flavor = "current_thread")]
        async fn add(&self, n: usize) -> usize {
            self.0 + n + compute().await
        }
    }
    assert_eq!(S(1).add(2), 4);
}

#[spinpark::main]
pub async fn never_returns() -> ! {
    panic!("never returns");
}

#[spinpark::main]
pub async fn result_main_that_panics() -> std::io::Result<()> {
    panic!("panics");
}

#[std::prelude::v1::test]
#[should_panic(expected = "never returns")]
fn a_main_returning_never() {
    never_returns();
}

#[allow(unreachable_code)]
#[spinpark::test]
pub async fn returns_before_a_panic() -> std::io::Result<()> {
    return Ok(());
    panic!();
}

#[allow(clippy::let_unit_value)]
pub mod clippy_semicolon_if_nothing_returned {
    #![deny(clippy::semicolon_if_nothing_returned)]

    #[spinpark::main]
    pub async fn local() {
        let _x = ();
    }
    #[spinpark::main]
    pub async fn item() {
        fn _f() {}
    }
    #[spinpark::main]
    pub async fn semi() {
        panic!();
    }
    #[spinpark::main]
    pub async fn empty() {
        // A block with a newline in it.
    }
}

pub mod from_macro_rules {
    macro_rules! mac {
        (async fn $name:ident() $b:block) => {
            #[::spinpark::test]
            async fn $name() {
                $b
            }
        };
    }
    mac!(
        async fn generated() {}
    );
}

#[spinpark::test(name = "a valid runtime name")]
async fn the_runtime_is_named() {
    let handle = spinpark::Handle::current();
    assert_eq!(handle.name(), Some("a valid runtime name"));
}

#[spinpark::main(name = "named main", flavor = "current_thread")]
async fn named_main() -> Option<String> {
    spinpark::Handle::current().name().map(str::to_owned)
}

#[std::prelude::v1::test]
fn main_takes_a_name_too() {
    assert_eq!(named_main().as_deref(), Some("named main"));
}

// `crate = "..."`: a renamed crate, and a path to it.
#[allow(unused_imports)]
use std as spinpark_shadowed;

use ::spinpark as spinpark1;

mod reexport {
    pub use ::spinpark;
}

#[spinpark1::main(crate = "spinpark1")]
async fn compute_main() -> usize {
    compute().await
}

#[std::prelude::v1::test]
fn crate_rename_main() {
    assert_eq!(compute_main(), 1);
}

#[spinpark1::test(crate = "spinpark1")]
async fn crate_rename_test() {
    assert_eq!(compute().await, 1);
}

#[reexport::spinpark::test(crate = "reexport::spinpark")]
async fn crate_path_test() {
    assert_eq!(compute().await, 1);
}
