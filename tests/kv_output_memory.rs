//! A reply too large for a connection's output limit is refused without being built: one
//! 2.7 KB `MGET` naming an 8 MiB key 300 times (2.4 GB of reply) gets `-ERR`, the connection
//! is closed, and the server's memory stays near what it held before. Before the limit, the
//! whole reply was encoded into one buffer (redis-server with its default limits does the
//! same, and dies of it). A counting allocator measures the peak. (One test in this binary,
//! so that no other test's allocations are counted.)

use examples_common::kv::{exec, serve_conn, Store, DEFAULT_MAX_OUTPUT};
use examples_common::resp::encode_command;

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

mod counting_alloc;

/// A client that sends `input`, then waits for ever (it never closes); it keeps the first
/// bytes of what it is sent, and counts the rest.
struct Client<'a> {
    input: &'a [u8],
    head: Vec<u8>,
    written: usize,
}

impl futures_io::AsyncRead for Client<'_> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        if self.input.is_empty() {
            return Poll::Pending;
        }
        let n = self.input.len().min(buf.len());
        buf[..n].copy_from_slice(&self.input[..n]);
        self.input = &self.input[n..];
        Poll::Ready(Ok(n))
    }
}

impl futures_io::AsyncWrite for Client<'_> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        b: &[u8],
    ) -> Poll<io::Result<usize>> {
        let keep = b.len().min(256usize.saturating_sub(self.head.len()));
        self.head.extend_from_slice(&b[..keep]);
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
fn an_mget_of_one_large_key_300_times_is_refused_without_building_it() {
    const VALUE: usize = 8 << 20;
    let store = Store::new();
    let set = [b"SET".to_vec(), b"big".to_vec(), vec![b'v'; VALUE]];
    assert_eq!(exec(&store, &set), examples_common::resp::Reply::ok());
    drop(set);
    let mget = encode_command(std::iter::once(&b"MGET"[..]).chain([&b"big"[..]; 300]));
    assert!(mget.len() < 3 << 10, "{} bytes", mget.len());

    let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
    let base = counting_alloc::reset_peak();
    let mut client = Client {
        input: &mget,
        head: Vec::new(),
        written: 0,
    };
    let mut served = Box::pin(serve_conn(&mut client, store.clone()));
    // The client never closes: only the server ending the connection ends the serving.
    let result = (0..1000).find_map(|_| match served.as_mut().poll(&mut cx) {
        Poll::Ready(r) => Some(r),
        Poll::Pending => None,
    });
    drop(served);
    let peak = counting_alloc::peak() - base;
    let head = String::from_utf8_lossy(&client.head);
    eprintln!(
        "MGET of an {VALUE}-byte key 300 times: peak {peak} bytes above the store, {} bytes \
         sent, starting {head:?}",
        client.written
    );
    assert!(
        peak < DEFAULT_MAX_OUTPUT / 4,
        "serving the MGET peaked at {peak} bytes (the limit is {DEFAULT_MAX_OUTPUT})"
    );
    assert!(
        head.starts_with("-ERR ") && head.contains("output limit"),
        "the client got {head:?}"
    );
    match result {
        Some(Err(e)) => assert_eq!(e.kind(), io::ErrorKind::InvalidData, "{e}"),
        other => panic!("the server did not close the connection: {other:?}"),
    }
}
