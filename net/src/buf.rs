//! Reading into a `bytes::BufMut` (tokio's `try_read_buf`, `recv_buf`): the read goes into
//! the buffer's spare capacity, uninitialised, and the buffer is advanced by what it took.

use std::io;
use std::mem::MaybeUninit;

use bytes::BufMut;

/// Runs `read` on `buf`'s next chunk of spare capacity and advances `buf` by the count it
/// returns. `read` must initialise the first `n` bytes of its slice when it returns `Ok(n)`.
pub(crate) fn read_into<B: BufMut + ?Sized>(
    buf: &mut B,
    read: impl FnOnce(&mut [MaybeUninit<u8>]) -> io::Result<usize>,
) -> io::Result<usize> {
    let chunk = buf.chunk_mut();
    // SAFETY: the slice is only written by `read` (a syscall writing initialised bytes),
    // never de-initialised.
    let dst = unsafe { chunk.as_uninit_slice_mut() };
    let n = read(dst)?;
    // SAFETY: `read` returned `n`: the first `n` bytes of the chunk are initialised.
    unsafe { buf.advance_mut(n) };
    Ok(n)
}
