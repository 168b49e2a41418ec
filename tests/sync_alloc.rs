//! `spinpark::sync`'s wrappers allocate nothing per operation: draining a prefilled channel,
//! taking a lock or a permit in a loop (yielding every 128 waits for the budget) performs no
//! allocation beyond what tokio's primitives do themselves (none, for these).
//!
//! The allocator counts the allocations of each thread; the runtime is a current-thread one,
//! so its tasks run on the test's thread, and other threads' allocations are not counted.

use std::alloc::{GlobalAlloc, Layout, System};
use std::cell::Cell;
use std::sync::Arc;

use spinpark::sync::{broadcast, mpsc, watch, Mutex, RwLock, Semaphore};

struct Counting;

thread_local! {
    /// Allocations made by this thread.
    static ALLOCS: Cell<usize> = const { Cell::new(0) };
}

fn count() {
    // `try_with`: a thread being torn down has no counter any more.
    let _ = ALLOCS.try_with(|n| n.set(n.get() + 1));
}

// SAFETY: every call is forwarded to `System` unchanged; the counter is only bookkeeping.
unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.alloc(layout) }
    }
    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.dealloc(ptr, layout) }
    }
    unsafe fn realloc(&self, ptr: *mut u8, layout: Layout, new_size: usize) -> *mut u8 {
        count();
        // SAFETY: forwarded with the caller's guarantees.
        unsafe { System.realloc(ptr, layout, new_size) }
    }
}

#[global_allocator]
static GLOBAL: Counting = Counting;

const N: usize = 10_000;

/// Allocations made while `f` runs.
async fn allocations<F: std::future::Future<Output = ()>>(f: F) -> usize {
    let before = ALLOCS.with(Cell::get);
    f.await;
    ALLOCS.with(Cell::get) - before
}

#[test]
fn waits_allocate_nothing() {
    let rt = spinpark::Builder::new_current_thread().build().unwrap();
    // In a task, so that each budget's end is a real yield through the scheduler.
    rt.block_on(async {
        spinpark::spawn(async {
            // The scheduler's first yields allocate once (its queue): not the wrappers' doing.
            for _ in 0..N {
                spinpark::task::coop::consume_budget().await;
            }
            let (tx, mut rx) = mpsc::channel(N);
            for i in 0..N {
                tx.try_send(i).unwrap();
            }
            let recv = allocations(async {
                for _ in 0..N {
                    rx.recv().await.unwrap();
                }
            });
            assert_eq!(recv.await, 0, "mpsc recv");

            let send = allocations(async {
                for i in 0..N {
                    tx.send(i).await.unwrap();
                    rx.recv().await.unwrap();
                }
            });
            assert_eq!(send.await, 0, "mpsc send");

            let (utx, mut urx) = mpsc::unbounded_channel();
            for i in 0..N {
                utx.send(i).unwrap();
            }
            let unbounded = allocations(async {
                for _ in 0..N {
                    urx.recv().await.unwrap();
                }
            });
            assert_eq!(unbounded.await, 0, "unbounded recv");

            let m = Arc::new(Mutex::new(0));
            let locks = allocations(async {
                for _ in 0..N {
                    *m.lock().await += 1;
                    *m.clone().lock_owned().await += 1;
                }
            });
            assert_eq!(locks.await, 0, "Mutex lock, lock_owned");

            let rw = RwLock::new(0);
            let rw_locks = allocations(async {
                for _ in 0..N {
                    drop(rw.read().await);
                    *rw.write().await += 1;
                }
            });
            assert_eq!(rw_locks.await, 0, "RwLock read, write");

            let sem = Semaphore::new(1);
            let permits = allocations(async {
                for _ in 0..N {
                    drop(sem.acquire().await.unwrap());
                }
            });
            assert_eq!(permits.await, 0, "Semaphore acquire");

            let (btx, mut brx) = broadcast::channel(16);
            let broadcasts = allocations(async {
                for i in 0..N {
                    btx.send(i).unwrap();
                    brx.recv().await.unwrap();
                }
            });
            assert_eq!(broadcasts.await, 0, "broadcast recv");

            let (wtx, mut wrx) = watch::channel(0);
            let changes = allocations(async {
                for i in 0..N {
                    wtx.send(i).unwrap();
                    wrx.changed().await.unwrap();
                }
            });
            assert_eq!(changes.await, 0, "watch changed");
        })
        .await
        .unwrap();
    });
}
