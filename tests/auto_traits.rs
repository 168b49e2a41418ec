//! Auto traits that tokio grants and users rely on, checked at compile time: each check is a
//! function that is never called, so this file passes by compiling. A positive check is a
//! trait bound; a negative one (`!Send`, `!Sync`) uses a method that exists twice when the
//! trait holds, which makes the call ambiguous and the file fail to compile.

#![allow(
    dead_code,
    unreachable_code,
    unused_variables,
    clippy::diverging_sub_expression
)]

use std::cell::Cell;
use std::os::fd::{AsRawFd, RawFd};
use std::rc::Rc;

use spinpark::io::unix::{AsyncFd, AsyncFdReadyGuard, AsyncFdReadyMutGuard};

fn require_send<T: Send>(_: &T) {}
fn require_sync<T: Sync>(_: &T) {}

struct Invalid;

trait AmbiguousIfSend<A> {
    fn some_item(&self) {}
}
impl<T: ?Sized> AmbiguousIfSend<()> for T {}
impl<T: ?Sized + Send> AmbiguousIfSend<Invalid> for T {}

trait AmbiguousIfSync<A> {
    fn some_item(&self) {}
}
impl<T: ?Sized> AmbiguousIfSync<()> for T {}
impl<T: ?Sized + Sync> AmbiguousIfSync<Invalid> for T {}

trait AmbiguousIfUnpin<A> {
    fn some_item(&self) {}
}
impl<T: ?Sized> AmbiguousIfUnpin<()> for T {}
impl<T: ?Sized + Unpin> AmbiguousIfUnpin<Invalid> for T {}

/// `Send` and `Sync`.
struct Yy;
/// `Send`, not `Sync`.
struct Yn(Cell<u8>);
/// Neither.
struct Nn(Rc<u8>);

/// An fd of any of the above kinds.
struct Fd<T>(T);

impl<T> AsRawFd for Fd<T> {
    fn as_raw_fd(&self) -> RawFd {
        0
    }
}

// `JoinError` is `Send + Sync`, so `?` converts it into `Box<dyn Error + Send + Sync>` (and
// `anyhow::Error`).
fn join_error() {
    let e: spinpark::task::JoinError = todo!();
    require_send(&e);
    require_sync(&e);
}

async fn join_error_question_mark() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    spinpark::spawn(async {}).await?;
    Ok(())
}

// `EnterGuard`: not `Send` (it restores this thread's context on drop), but `Sync`.
fn enter_guard() {
    let g: spinpark::runtime::EnterGuard<'_> = todo!();
    AmbiguousIfSend::some_item(&g);
    require_sync(&g);
}

// The futures of `readable_mut`/`writable_mut`/`ready_mut` lend the `AsyncFd` mutably, so
// they are `Send` when the inner type is `Send`, even if it is not `Sync`; `readable` and
// `writable` share it, so they need `Sync`.
macro_rules! send_not_sync {
    ($f:expr) => {{
        let f = $f;
        require_send(&f);
        AmbiguousIfSync::some_item(&f);
    }};
}

macro_rules! neither {
    ($f:expr) => {{
        let f = $f;
        AmbiguousIfSend::some_item(&f);
        AmbiguousIfSync::some_item(&f);
    }};
}

macro_rules! send_and_sync {
    ($f:expr) => {{
        let f = $f;
        require_send(&f);
        require_sync(&f);
    }};
}

fn async_fd_futures() {
    let fd: &mut AsyncFd<Fd<Yy>> = todo!();
    send_and_sync!(fd.readable_mut());
    let fd: &mut AsyncFd<Fd<Yy>> = todo!();
    send_and_sync!(fd.writable_mut());
    let fd: &AsyncFd<Fd<Yy>> = todo!();
    send_and_sync!(fd.readable());

    let fd: &mut AsyncFd<Fd<Yn>> = todo!();
    send_not_sync!(fd.readable_mut());
    let fd: &mut AsyncFd<Fd<Yn>> = todo!();
    send_not_sync!(fd.writable_mut());
    let fd: &mut AsyncFd<Fd<Yn>> = todo!();
    send_not_sync!(fd.ready_mut(spinpark::io::Interest::READABLE));
    let fd: &AsyncFd<Fd<Yn>> = todo!();
    neither!(fd.readable());
    let fd: &AsyncFd<Fd<Yn>> = todo!();
    neither!(fd.writable());

    let fd: &mut AsyncFd<Fd<Nn>> = todo!();
    neither!(fd.readable_mut());
    let fd: &mut AsyncFd<Fd<Nn>> = todo!();
    neither!(fd.writable_mut());
}

// The guards, as tokio's: the mutable one is `Send` for a `Send` inner type.
fn async_fd_guards() {
    let g: AsyncFdReadyMutGuard<'_, Fd<Yn>> = todo!();
    require_send(&g);
    AmbiguousIfSync::some_item(&g);
    let g: AsyncFdReadyGuard<'_, Fd<Yn>> = todo!();
    AmbiguousIfSend::some_item(&g);
    AmbiguousIfSync::some_item(&g);
    let g: AsyncFdReadyMutGuard<'_, Fd<Yy>> = todo!();
    require_send(&g);
    require_sync(&g);
}

/// The checks above are made by the compiler; this test only makes `cargo test` list the
/// file, and checks the one behaviour that needs a runtime: the error converts.
#[test]
fn join_error_converts_into_a_boxed_send_sync_error() {
    let rt = spinpark::Builder::new_current_thread().build().unwrap();
    rt.block_on(async {
        join_error_question_mark().await.unwrap();
        let err: Box<dyn std::error::Error + Send + Sync> = spinpark::spawn(async {
            panic!("boom");
        })
        .await
        .unwrap_err()
        .into();
        assert!(err.to_string().ends_with("panicked with message \"boom\""));
    });
}

/// A `JoinError` shared between threads shows its message on each, and the payload still
/// comes back whole from `into_panic` (a `String` payload, which the error copies its message
/// from).
#[test]
fn join_error_shared_between_threads() {
    let rt = spinpark::Builder::new_current_thread().build().unwrap();
    let err = rt
        .block_on(rt.spawn(async {
            std::panic::panic_any(format!("boom {}", 7));
        }))
        .unwrap_err();
    let shown: Vec<String> = std::thread::scope(|s| {
        let a = s.spawn(|| err.to_string());
        let b = s.spawn(|| format!("{err:?}"));
        vec![a.join().unwrap(), b.join().unwrap()]
    });
    assert!(
        shown[0].ends_with("panicked with message \"boom 7\""),
        "{}",
        shown[0]
    );
    assert!(shown[1].contains("\"boom 7\""), "{}", shown[1]);
    let payload = err.into_panic();
    assert_eq!(
        payload.downcast_ref::<String>().map(String::as_str),
        Some("boom 7")
    );
}

// The timer's errors, as tokio's: `Send + Sync + Unpin`.
fn time_errors() {
    let e: spinpark::time::error::Error = todo!();
    require_send(&e);
    require_sync(&e);
    let e: spinpark::time::error::Elapsed = todo!();
    require_send(&e);
    require_sync(&e);
}

// Futures that are `!Unpin` on tokio (an `async fn`'s there) are `!Unpin` here too, whatever
// they wrap: code that relied on spinpark's `Unpin` would break on tokio.
fn not_unpin_as_on_tokio() {
    let l: &spinpark::net::TcpListener = todo!();
    AmbiguousIfUnpin::some_item(&l.accept());
    let l: &spinpark::net::UnixListener = todo!();
    AmbiguousIfUnpin::some_item(&l.accept());
    let i: &mut spinpark::time::Interval = todo!();
    AmbiguousIfUnpin::some_item(&i.tick());
    spinpark::task_local! { static KEY: u32; }
    let f = KEY.scope(1, std::future::ready(()));
    AmbiguousIfUnpin::some_item(&f);
    let set: &spinpark::task::LocalSet = todo!();
    AmbiguousIfUnpin::some_item(&set.run_until(std::future::ready(())));
}

// `JoinHandle<T>` is `Send` and `Sync` only for `T: Send`, and `LocalOptions` neither, as
// tokio's.
fn join_handle_and_local_options() {
    let h: spinpark::task::JoinHandle<Nn> = todo!();
    AmbiguousIfSend::some_item(&h);
    AmbiguousIfSync::some_item(&h);
    let h: spinpark::task::JoinHandle<Yn> = todo!();
    require_send(&h);
    require_sync(&h);
    let o: spinpark::runtime::LocalOptions = todo!();
    AmbiguousIfSend::some_item(&o);
    AmbiguousIfSync::some_item(&o);
}
