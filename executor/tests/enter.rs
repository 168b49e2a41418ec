//! `Handle::enter` / `Runtime::enter`: the runtime is current on a plain thread while the
//! guard lives, and what was current before comes back when it drops.

use spinpark_executor::{spawn, Builder, Handle};

#[test]
fn enter_makes_spawn_and_current_work_on_a_plain_thread() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    let handle = rt.handle().clone();
    let out = std::thread::spawn(move || {
        assert!(Handle::try_current().is_err());
        let task = {
            let _g = handle.enter();
            let current = Handle::current();
            assert_eq!(current.worker_threads(), 2);
            spawn(async { 40 + 2 })
        };
        assert!(Handle::try_current().is_err(), "the guard did not restore");
        handle.block_on(task).unwrap()
    })
    .join()
    .unwrap();
    assert_eq!(out, 42);
}

#[test]
fn nested_enters_restore_the_outer_runtime() {
    let a = Builder::new().worker_threads(1).build().unwrap();
    let b = Builder::new().worker_threads(3).build().unwrap();
    let _ga = a.enter();
    assert_eq!(Handle::current().worker_threads(), 1);
    {
        let _gb = b.enter();
        assert_eq!(Handle::current().worker_threads(), 3);
    }
    assert_eq!(Handle::current().worker_threads(), 1);
}

#[test]
fn enter_inside_block_on_keeps_block_on_forbidden() {
    let rt = Builder::new().worker_threads(1).build().unwrap();
    let other = Builder::new().worker_threads(1).build().unwrap();
    let nested = rt.block_on(async {
        let _g = other.enter();
        // A nested block_on would deadlock; it must still be refused after enter().
        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| other.block_on(async {}))).is_err()
    });
    assert!(nested, "block_on inside block_on was allowed after enter()");
}

#[test]
fn guards_dropped_out_of_order_panic() {
    let a = Builder::new().worker_threads(1).build().unwrap();
    let b = Builder::new().worker_threads(1).build().unwrap();
    let out_of_order = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
        let ga = a.enter();
        let gb = b.enter();
        drop(ga); // b's guard is still alive: `a` must not be left current behind it
        drop(gb);
    }));
    let err = out_of_order.expect_err("dropping the outer guard first did not panic");
    let msg = err
        .downcast_ref::<String>()
        .map(String::as_str)
        .or_else(|| err.downcast_ref::<&str>().copied())
        .unwrap_or("");
    assert!(msg.contains("out of order"), "{msg}");
    // In order is fine, and leaves nothing current.
    std::thread::spawn(move || {
        let ga = a.enter();
        let gb = b.enter();
        drop(gb);
        drop(ga);
        assert!(Handle::try_current().is_err());
    })
    .join()
    .unwrap();
}
