//! A large SET is held about twice at its peak (the read buffer and the stored value), not
//! three or four times (read buffer, a copy per argument, another into the stored `Arc`, and
//! a read buffer doubled past the request's size). A counting allocator measures the peak.
//! (One test in this binary, so that no other test's allocations are counted.)

use examples_common::kv::{exec, serve_conn, Store};
use examples_common::resp::{encode_command, Reply};

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

mod counting_alloc;

/// A client that sends `input` in 64 KiB pieces, then closes; replies are counted.
struct Sender<'a> {
    input: &'a [u8],
    written: usize,
}

impl futures_io::AsyncRead for Sender<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let n = self.input.len().min(buf.len()).min(64 << 10);
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Poll::Ready(Ok(n))
    }
}

impl futures_io::AsyncWrite for Sender<'_> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        b: &[u8],
    ) -> Poll<io::Result<usize>> {
        self.written += b.len();
        Poll::Ready(Ok(b.len()))
    }
    fn poll_flush(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
    fn poll_close(self: Pin<&mut Self>, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }
}

#[test]
fn a_large_set_is_held_about_twice_at_its_peak() {
    const VALUE: usize = 24 << 20;
    let value = vec![b'v'; VALUE];
    let request = encode_command([&b"SET"[..], b"big", &value]);
    drop(value);
    let store = Store::new();
    let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
    let base = counting_alloc::reset_peak();
    let mut sender = Sender {
        input: &request,
        written: 0,
    };
    let mut served = Box::pin(serve_conn(&mut sender, store.clone()));
    let mut polls = 0;
    while served.as_mut().poll(&mut cx).is_pending() {
        polls += 1;
        assert!(polls < 1_000_000, "serve_conn never finished");
    }
    drop(served);
    assert_eq!(sender.written, 5, "+OK\\r\\n");
    let peak = counting_alloc::peak() - base;
    eprintln!(
        "a {VALUE}-byte SET peaked at {peak} bytes ({:.2}x)",
        peak as f64 / VALUE as f64
    );
    assert!(
        peak < VALUE * 5 / 2,
        "a {VALUE}-byte SET peaked at {peak} bytes ({:.2}x)",
        peak as f64 / VALUE as f64
    );
    match exec(&store, &[b"GET".to_vec(), b"big".to_vec()]) {
        Reply::Bulk(v) => assert!(v.len() == VALUE && v.iter().all(|&b| b == b'v')),
        other => panic!("GET big: {other:?}"),
    }
}
