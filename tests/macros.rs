//! `#[spinpark::test]` on real tests: each one runs on a runtime of its own.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll, Waker};
use std::thread;
use std::time::Duration;

/// Resolves to `value` once another thread has woken the task, so awaiting it
/// needs a runtime whose waker works across threads.
fn from_another_thread<T: Send + Unpin + 'static>(value: T) -> impl Future<Output = T> {
    struct Shared<T> {
        value: Option<T>,
        waker: Option<Waker>,
    }
    struct FromThread<T> {
        value: Option<T>,
        shared: Arc<Mutex<Shared<T>>>,
    }
    impl<T: Send + Unpin + 'static> Future for FromThread<T> {
        type Output = T;
        fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<T> {
            let this = self.get_mut();
            let mut shared = this.shared.lock().unwrap();
            if let Some(value) = shared.value.take() {
                return Poll::Ready(value);
            }
            shared.waker = Some(cx.waker().clone());
            if let Some(value) = this.value.take() {
                let shared = Arc::clone(&this.shared);
                thread::spawn(move || {
                    thread::sleep(Duration::from_millis(10));
                    let mut shared = shared.lock().unwrap();
                    shared.value = Some(value);
                    shared.waker.take().unwrap().wake();
                });
            }
            Poll::Pending
        }
    }
    FromThread {
        value: Some(value),
        shared: Arc::new(Mutex::new(Shared {
            value: None,
            waker: None,
        })),
    }
}

async fn double(n: u32) -> u32 {
    from_another_thread(n).await * 2
}

#[spinpark::test]
async fn awaits_and_asserts() {
    assert_eq!(double(21).await, 42);
    assert_eq!(from_another_thread("spun").await, "spun");
}

#[spinpark::test(worker_threads = 2, spin = "0")]
async fn with_arguments() {
    let (a, b) = (double(1).await, double(2).await);
    assert_eq!((a, b), (2, 4));
}

#[spinpark::test(max_spinners = 1, spin = "1.5ms")]
async fn with_a_decimal_spin() {
    assert_eq!(double(5).await, 10);
    let window = spinpark::Handle::current().metrics().spin_window();
    assert_eq!(window, std::time::Duration::from_micros(1500));
}

#[spinpark::test(spin = "adaptive")]
async fn with_the_adaptive_policy() {
    assert_eq!(double(6).await, 12);
    // The adaptive policy's window stays within its default bounds (0..=1 ms).
    let window = spinpark::Handle::current().metrics().spin_window();
    assert!(window <= std::time::Duration::from_millis(1), "{window:?}");
}

#[spinpark::test]
#[should_panic(expected = "boom from inside the runtime")]
async fn panics_propagate() {
    let n = double(3).await;
    assert_eq!(n, 6, "double(3) went wrong before the panic");
    panic!("boom from inside the runtime");
}

// Attributes above the macro reach it too.
#[should_panic(expected = "assertion `left == right` failed")]
#[spinpark::test(worker_threads = 1)]
async fn failed_assertion_fails_the_test() {
    assert_eq!(double(1).await, 3);
}

#[spinpark::test]
#[ignore = "checks that #[ignore] survives the macro; run with --include-ignored"]
async fn ignored() {
    assert_eq!(double(50).await, 100);
}

#[spinpark::test]
async fn returns_a_result() -> Result<(), String> {
    let n: u32 = "21".parse().map_err(|e| format!("{e}"))?;
    let doubled = double(n).await;
    if doubled != 42 {
        return Err(format!("expected 42, got {doubled}"));
    }
    Ok(())
}

// The body may use `?` with a conversion, like the body of an `async fn`.
#[spinpark::test]
async fn question_mark_converts_errors() -> Result<(), Box<dyn std::error::Error>> {
    let n: u32 = from_another_thread("7").await.parse()?;
    assert_eq!(n, 7);
    Ok(())
}

mod renamed {
    // `crate = "..."` for crates that reach spinpark through a re-export.
    mod my_reexport {
        pub use spinpark as runtime;
    }

    #[spinpark::test(crate = "self::my_reexport::runtime")]
    async fn through_a_reexport() {
        assert_eq!(super::double(4).await, 8);
    }
}

// `flavor = "local"`: a current-thread runtime with a local set, so a test may spawn tasks
// that are not `Send` anywhere in it.
#[spinpark::test(flavor = "local")]
async fn local_flavor_spawns_local_tasks() {
    let rc = std::rc::Rc::new(5);
    let r = rc.clone();
    let v = spinpark::task::spawn_local(async move { *r * 2 })
        .await
        .unwrap();
    assert_eq!(v, 10);
    assert_eq!(std::rc::Rc::strong_count(&rc), 1);
}
