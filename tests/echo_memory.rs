//! The echo server's memory is bounded by the bytes a client actually sent, not by the length
//! its header claims: a counting allocator measures what serving a bare 16 MiB header costs.
//! (One test in this binary, so that no other test's allocations are counted.)

use examples_common::echo_proto::{serve_futures_io, DEFAULT_MAX_FRAME};

use std::future::Future;
use std::io;
use std::pin::Pin;
use std::task::{Context, Poll};

mod counting_alloc;

/// A client that sent `sent`, then waits (reads are `Pending` from then on).
struct Stalled {
    sent: Vec<u8>,
    pos: usize,
}

impl futures_io::AsyncRead for Stalled {
    fn poll_read(
        mut self: Pin<&mut Self>,
        _: &mut Context<'_>,
        buf: &mut [u8],
    ) -> Poll<io::Result<usize>> {
        let rest = &self.sent[self.pos..];
        if rest.is_empty() {
            return Poll::Pending;
        }
        let n = rest.len().min(buf.len());
        buf[..n].copy_from_slice(&rest[..n]);
        self.pos += n;
        Poll::Ready(Ok(n))
    }
}

impl futures_io::AsyncWrite for Stalled {
    fn poll_write(self: Pin<&mut Self>, _: &mut Context<'_>, b: &[u8]) -> Poll<io::Result<usize>> {
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
fn headers_announcing_16_mib_cost_what_was_sent_not_what_was_announced() {
    const CONNECTIONS: usize = 8;
    let mut header = (DEFAULT_MAX_FRAME as u32).to_be_bytes().to_vec();
    header.extend_from_slice(b"a few payload bytes");
    let before = counting_alloc::live();
    let mut served: Vec<_> = (0..CONNECTIONS)
        .map(|_| {
            Box::pin(serve_futures_io(
                Stalled {
                    sent: header.clone(),
                    pos: 0,
                },
                DEFAULT_MAX_FRAME,
            ))
        })
        .collect();
    let mut cx = Context::from_waker(futures_util::task::noop_waker_ref());
    for s in &mut served {
        assert!(
            s.as_mut().poll(&mut cx).is_pending(),
            "the frame is incomplete"
        );
    }
    let per_connection = (counting_alloc::live().saturating_sub(before)) / CONNECTIONS;
    // A 16 KiB read buffer and at most a 64 KiB frame reserve each; the old code held 16 MiB.
    assert!(
        per_connection < 256 << 10,
        "{per_connection} bytes per connection for a header and 19 payload bytes"
    );
    drop(served);
}
