//! `LocalSet`, `spawn_local` and `LocalRuntime`: tasks that are not `Send` run on the set's
//! thread, wake from any thread, are cancelled (on that thread) when the set is dropped, and
//! behave as ordinary tasks otherwise (handles, aborts, panics, ids).

mod common;

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc};
use std::thread;
use std::time::Duration;

use futures_util::FutureExt;
use spinpark_executor::{spawn_local, yield_now, Builder, LocalRuntime, LocalSet};

const WATCHDOG: Duration = Duration::from_secs(30);

fn current_thread() -> spinpark_executor::Runtime {
    Builder::new_current_thread().build().unwrap()
}

#[test]
fn local_tasks_run_on_the_sets_thread_with_values_that_are_not_send() {
    for multi in [false, true] {
        common::within(WATCHDOG, "local tasks", move || {
            let rt = if multi {
                common::rt(2)
            } else {
                current_thread()
            };
            let set = LocalSet::new();
            let here = thread::current().id();
            let log = Rc::new(RefCell::new(Vec::new()));
            let l = log.clone();
            set.block_on(&rt, async move {
                let mut tasks = Vec::new();
                for i in 0..10 {
                    let l = l.clone();
                    tasks.push(spawn_local(async move {
                        yield_now().await;
                        assert_eq!(thread::current().id(), here);
                        l.borrow_mut().push(i);
                    }));
                }
                for t in tasks {
                    t.await.unwrap();
                }
            });
            let mut seen = log.borrow().clone();
            seen.sort();
            assert_eq!(seen, (0..10).collect::<Vec<_>>());
        });
    }
}

#[test]
fn a_local_task_woken_from_other_threads_runs() {
    common::within(WATCHDOG, "remote wakes", || {
        let rt = common::rt(2);
        let set = LocalSet::new();
        let count = Rc::new(Cell::new(0));
        let c = count.clone();
        set.block_on(&rt, async move {
            let mut tasks = Vec::new();
            for _ in 0..8 {
                let (tx, rx) = tokio::sync::oneshot::channel::<u32>();
                // The sender is on a plain thread: the wake comes from there.
                thread::spawn(move || {
                    thread::sleep(Duration::from_millis(5));
                    tx.send(1).unwrap();
                });
                let c = c.clone();
                tasks.push(spawn_local(async move {
                    let v = rx.await.unwrap();
                    c.set(c.get() + v)
                }));
            }
            for t in tasks {
                t.await.unwrap();
            }
        });
        assert_eq!(count.get(), 8);
    });
}

#[test]
fn awaiting_a_set_runs_it_until_every_task_has_finished() {
    common::within(WATCHDOG, "set awaited", || {
        let rt = current_thread();
        let set = LocalSet::new();
        let done = Rc::new(Cell::new(0));
        let d = done.clone();
        set.spawn_local(async move {
            for _ in 0..5 {
                let d = d.clone();
                // Tasks spawned by a task are waited for too.
                spawn_local(async move {
                    yield_now().await;
                    d.set(d.get() + 1);
                });
            }
        });
        rt.block_on(set);
        assert_eq!(done.get(), 5);
    });
}

/// Records its drop.
struct Dropped(Arc<AtomicUsize>);

impl Drop for Dropped {
    fn drop(&mut self) {
        self.0.fetch_add(1, SeqCst);
    }
}

#[test]
fn dropping_the_set_cancels_its_tasks_on_its_thread() {
    common::within(WATCHDOG, "set dropped", || {
        let rt = current_thread();
        let set = LocalSet::new();
        let rc = Rc::new(());
        let drops = Arc::new(AtomicUsize::new(0));
        let mut handles = Vec::new();
        for _ in 0..3 {
            let rc = rc.clone();
            let guard = Dropped(drops.clone());
            handles.push(set.spawn_local(async move {
                let _keep = (rc, guard);
                std::future::pending::<()>().await
            }));
        }
        // One that has been polled (waiting on a waker), two never polled.
        set.block_on(&rt, yield_now());
        let here = thread::current().id();
        let on_thread = Rc::new(Cell::new(true));
        let o = on_thread.clone();
        struct CheckThread(thread::ThreadId, Rc<Cell<bool>>);
        impl Drop for CheckThread {
            fn drop(&mut self) {
                self.1.set(self.1.get() && thread::current().id() == self.0);
            }
        }
        let checked = CheckThread(here, o);
        handles.push(set.spawn_local(async move {
            let _c = checked;
            std::future::pending::<()>().await
        }));
        drop(set);
        assert_eq!(Rc::strong_count(&rc), 1, "the futures were not dropped");
        assert_eq!(drops.load(SeqCst), 3);
        assert!(on_thread.get());
        for h in handles {
            let err = rt.block_on(h).unwrap_err();
            assert!(err.is_cancelled(), "{err:?}");
        }
    });
}

#[test]
fn spawn_local_outside_a_set_panics_with_tokios_message() {
    let err = std::panic::catch_unwind(|| spawn_local(async {})).unwrap_err();
    let text = err.downcast_ref::<&str>().copied().unwrap_or_default();
    assert!(
        text.contains(
            "`spawn_local` called from outside of a `task::LocalSet` or `runtime::LocalRuntime`"
        ),
        "{text}"
    );
}

#[test]
fn a_panicking_local_task_is_a_join_error_and_the_set_goes_on() {
    common::within(WATCHDOG, "local panic", || {
        let rt = current_thread();
        let set = LocalSet::new();
        let (err, after) = set.block_on(&rt, async {
            let err = spawn_local(async { panic!("local boom") })
                .await
                .unwrap_err();
            let after = spawn_local(async { 5 }).await.unwrap();
            (err, after)
        });
        assert_eq!(common::panic_text(err), "local boom");
        assert_eq!(after, 5);
    });
}

#[test]
fn a_local_task_aborted_from_another_thread_is_cancelled() {
    common::within(WATCHDOG, "remote abort", || {
        let rt = common::rt(2);
        let set = LocalSet::new();
        let rc = Rc::new(());
        let r = rc.clone();
        let task = set.spawn_local(async move {
            let _r = r;
            std::future::pending::<()>().await
        });
        let abort = task.abort_handle();
        let err = set.block_on(&rt, async move {
            yield_now().await; // polled once: waiting
            thread::spawn(move || abort.abort()).join().unwrap();
            task.await.unwrap_err()
        });
        assert!(err.is_cancelled());
        assert_eq!(Rc::strong_count(&rc), 1);
    });
}

#[test]
fn a_busy_local_task_does_not_starve_the_future_that_drives_the_set() {
    common::within(WATCHDOG, "busy local task", || {
        let rt = current_thread();
        let set = LocalSet::new();
        let spins = Rc::new(Cell::new(0u64));
        let s = spins.clone();
        set.spawn_local(async move {
            loop {
                s.set(s.get() + 1);
                yield_now().await;
            }
        });
        let (tx, rx) = tokio::sync::oneshot::channel();
        thread::spawn(move || tx.send(()).unwrap());
        // Completes although the local task is always ready.
        set.block_on(&rt, rx).unwrap();
    });
}

#[test]
fn task_ids_and_join_handles_work_for_local_tasks() {
    common::within(WATCHDOG, "local ids", || {
        let rt = current_thread();
        let set = LocalSet::new();
        set.block_on(&rt, async {
            let task = spawn_local(async { spinpark_executor::task::id() });
            let id = task.id();
            assert_eq!(task.await.unwrap(), id);
            let finished = spawn_local(async {});
            yield_now().await;
            assert!(finished.is_finished());
            assert!(finished.now_or_never().unwrap().is_ok());
        });
    });
}

#[test]
fn many_threads_waking_local_tasks_at_once_lose_no_wake() {
    common::within(WATCHDOG, "wake storm", || {
        let rt = common::rt(2);
        let set = LocalSet::new();
        let total = set.block_on(&rt, async {
            let (tx, rx) = mpsc::channel::<tokio::sync::oneshot::Sender<u64>>();
            let senders = thread::spawn(move || {
                let mut n = 0;
                for s in rx {
                    s.send(1).unwrap();
                    n += 1;
                }
                n
            });
            let mut tasks = Vec::new();
            for _ in 0..500 {
                let (otx, orx) = tokio::sync::oneshot::channel();
                tx.send(otx).unwrap();
                tasks.push(spawn_local(async move { orx.await.unwrap() }));
            }
            drop(tx);
            let mut total = 0;
            for t in tasks {
                total += t.await.unwrap();
            }
            assert_eq!(senders.join().unwrap(), 500);
            total
        });
        assert_eq!(total, 500);
    });
}

#[test]
fn a_local_runtime_spawns_local_tasks_wherever_it_is_current() {
    common::within(WATCHDOG, "LocalRuntime", || {
        let rt = LocalRuntime::new().unwrap();
        let rc = Rc::new(Cell::new(0));
        let r = rc.clone();
        // Outside block_on, through the runtime and through an enter guard.
        let a = rt.spawn_local(async move { r.set(r.get() + 1) });
        let r = rc.clone();
        let b = {
            let _guard = rt.enter();
            spawn_local(async move { r.set(r.get() + 10) })
        };
        let r = rc.clone();
        let sent = rt.handle().spawn(async { 100 });
        let v = rt.block_on(async move {
            a.await.unwrap();
            b.await.unwrap();
            spawn_local(async move { r.set(r.get() + 100) })
                .await
                .unwrap();
            sent.await.unwrap()
        });
        assert_eq!((rc.get(), v), (111, 100));
        // Dropping the runtime cancels a waiting local task, on this thread.
        let r = rc.clone();
        let waiting = rt.spawn_local(async move {
            let _r = r;
            std::future::pending::<()>().await
        });
        rt.block_on(yield_now());
        drop(rt);
        assert_eq!(Rc::strong_count(&rc), 1);
        assert!(waiting.now_or_never().unwrap().unwrap_err().is_cancelled());
    });
}

#[test]
fn build_local_refuses_a_multi_thread_builder() {
    let err = Builder::new_multi_thread()
        .build_local(Default::default())
        .unwrap_err();
    assert_eq!(err.kind(), std::io::ErrorKind::InvalidInput);
}
