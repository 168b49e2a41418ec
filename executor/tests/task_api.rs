//! The task API a tokio program uses beyond spawn and await: task ids, task-local values and
//! the cooperative budget.

mod common;

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering::SeqCst};
use std::sync::{mpsc, Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use spinpark_executor::task::{self, coop};
use spinpark_executor::{spawn, yield_now, JoinSet};

const WATCHDOG: Duration = Duration::from_secs(30);

fn within<T: Send + 'static>(what: &str, f: impl FnOnce() -> T + Send + 'static) -> T {
    common::within(WATCHDOG, what, f)
}

#[test]
fn each_task_knows_its_id_and_its_handles_report_it() {
    within("ids", || {
        let rt = common::rt(2);
        rt.block_on(async {
            assert_eq!(task::try_id(), None, "block_on's future is not a task");
            let tasks: Vec<_> = (0..64).map(|_| spawn(async { task::id() })).collect();
            let mut seen = std::collections::HashSet::new();
            for t in tasks {
                let (id, abort) = (t.id(), t.abort_handle().id());
                assert_eq!(id, abort);
                assert_eq!(t.await.unwrap(), id);
                assert!(seen.insert(id), "id {id} given twice");
            }
            let blocking = spinpark_executor::spawn_blocking(task::id);
            let id = blocking.id();
            assert_eq!(blocking.await.unwrap(), id);
        });
        assert_eq!(task::try_id(), None);
    });
}

#[test]
fn a_join_error_carries_the_failed_tasks_id() {
    within("JoinError::id", || {
        let rt = common::rt(2);
        rt.block_on(async {
            let t = spawn(async { panic!("boom") });
            let id = t.id();
            assert_eq!(t.await.unwrap_err().id(), id);
            let t = spawn(std::future::pending::<()>());
            let id = t.id();
            t.abort();
            assert_eq!(t.await.unwrap_err().id(), id);
        });
    });
}

/// Sends `task::try_id()` when dropped.
struct SendIdOnDrop(Option<mpsc::Sender<Option<task::Id>>>);

impl Drop for SendIdOnDrop {
    fn drop(&mut self) {
        let _ = self.0.take().unwrap().send(task::try_id());
    }
}

#[test]
fn the_id_is_set_in_the_futures_and_the_outputs_destructors() {
    within("ids in destructors", || {
        let rt = common::rt(2);
        // The future's destructor, when the task is aborted.
        let (tx, rx) = mpsc::channel();
        let guard = SendIdOnDrop(Some(tx));
        let t = rt.spawn(async move {
            let _guard = guard;
            std::future::pending::<()>().await
        });
        let id = t.id();
        t.abort();
        assert_eq!(rx.recv().unwrap(), Some(id));
        // The output's destructor, when the handle was dropped before the task finished.
        let (tx, rx) = mpsc::channel();
        let (go_tx, go_rx) = std::sync::mpsc::channel::<()>();
        let t = rt.spawn(async move {
            let _ = go_rx.recv();
            SendIdOnDrop(Some(tx))
        });
        let id = t.id();
        drop(t);
        go_tx.send(()).unwrap();
        assert_eq!(rx.recv().unwrap(), Some(id));
        // The output's destructor, when the handle drops it after the task finished.
        let (tx, rx) = mpsc::channel();
        let t = rt.spawn(async move { SendIdOnDrop(Some(tx)) });
        let id = t.id();
        while !t.is_finished() {
            std::thread::yield_now();
        }
        drop(t);
        assert_eq!(rx.recv().unwrap(), Some(id));
    });
}

#[test]
fn join_set_reports_ids() {
    within("JoinSet ids", || {
        let rt = common::rt(2);
        rt.block_on(async {
            let mut set = JoinSet::new();
            let mut ids: Vec<_> = (0..8u32)
                .map(|i| (set.spawn(async move { i }).id(), i))
                .collect();
            let mut got = Vec::new();
            while let Some(r) = set.join_next_with_id().await {
                got.push(r.unwrap());
            }
            ids.sort();
            got.sort();
            assert_eq!(got, ids);
            assert!(set.try_join_next_with_id().is_none());
        });
    });
}

spinpark_executor::task_local! {
    static REQUEST: u32;
    static NAME: String;
}

#[test]
fn a_task_local_follows_its_task_across_polls_and_workers() {
    within("task-local across workers", || {
        let rt = common::rt(2);
        rt.block_on(async {
            let tasks: Vec<_> = (0..32u32)
                .map(|i| {
                    spawn(REQUEST.scope(i, async move {
                        for _ in 0..20 {
                            // Yielding lets the task move to the other worker, and lets
                            // other tasks with other values run on this one meanwhile.
                            yield_now().await;
                            assert_eq!(REQUEST.get(), i);
                        }
                        REQUEST.get()
                    }))
                })
                .collect();
            for (i, t) in tasks.into_iter().enumerate() {
                assert_eq!(t.await.unwrap(), i as u32);
            }
            assert!(REQUEST.try_get().is_err());
        });
    });
}

#[test]
fn task_local_scopes_nest_and_restore() {
    let out = REQUEST.sync_scope(1, || {
        let inner = REQUEST.sync_scope(2, || REQUEST.get());
        (inner, REQUEST.get())
    });
    assert_eq!(out, (2, 1));
    assert!(REQUEST.try_with(|_| ()).is_err());
    // A panic inside a scope leaves the key unset again.
    let caught = std::panic::catch_unwind(|| REQUEST.sync_scope(3, || panic!("inside")));
    assert!(caught.is_err());
    assert!(REQUEST.try_get().is_err());
}

#[test]
fn entering_a_scope_inside_with_panics() {
    let caught = std::panic::catch_unwind(|| {
        NAME.sync_scope("a".into(), || {
            NAME.with(|_| NAME.sync_scope("b".into(), || ()))
        })
    });
    assert!(caught.is_err());
}

/// Records `NAME` when dropped.
struct RecordName(Arc<Mutex<Option<String>>>);

impl Drop for RecordName {
    fn drop(&mut self) {
        *self.0.lock().unwrap() = NAME.try_get().ok();
    }
}

#[test]
fn a_task_local_is_set_while_an_aborted_future_is_dropped() {
    within("task-local on abort", || {
        let rt = common::rt(2);
        let seen = Arc::new(Mutex::new(None));
        let record = RecordName(seen.clone());
        let (polled_tx, polled_rx) = mpsc::channel();
        let t = rt.spawn(NAME.scope("req-9".into(), async move {
            let _record = record;
            polled_tx.send(()).unwrap();
            std::future::pending::<()>().await
        }));
        polled_rx.recv().unwrap();
        t.abort();
        assert!(rt.block_on(t).unwrap_err().is_cancelled());
        assert_eq!(seen.lock().unwrap().as_deref(), Some("req-9"));
    });
}

#[test]
fn take_value_leaves_the_future_without_it() {
    let mut fut = Box::pin(REQUEST.scope(5, async { REQUEST.try_get().is_err() }));
    assert_eq!(fut.as_mut().take_value(), Some(5));
    assert_eq!(fut.as_mut().take_value(), None);
    let unset = futures_util::FutureExt::now_or_never(fut).unwrap();
    assert!(unset);
}

/// Counts its polls; ready once `stop` is set.
struct CountPolls {
    polls: Arc<AtomicUsize>,
    stop: Arc<AtomicBool>,
}

impl Future for CountPolls {
    type Output = ();
    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<()> {
        self.polls.fetch_add(1, SeqCst);
        if self.stop.load(SeqCst) {
            return Poll::Ready(());
        }
        cx.waker().wake_by_ref();
        Poll::Pending
    }
}

#[test]
fn consume_budget_yields_once_the_budget_is_spent_and_unconstrained_never_does() {
    within("coop", || {
        // One worker, so the only way the neighbour runs is the loop yielding.
        let rt = common::rt(1);
        rt.block_on(async {
            let (polls, stop) = (
                Arc::new(AtomicUsize::new(0)),
                Arc::new(AtomicBool::new(false)),
            );
            let neighbour = spawn(CountPolls {
                polls: polls.clone(),
                stop: stop.clone(),
            });
            let p = polls.clone();
            let looped = spawn(async move {
                // Let the neighbour be polled once first.
                while p.load(SeqCst) == 0 {
                    yield_now().await;
                }
                let before = p.load(SeqCst);
                for _ in 0..(coop::BUDGET * 4) {
                    coop::consume_budget().await;
                }
                let constrained = p.load(SeqCst) - before;
                let before = p.load(SeqCst);
                let budget_left = coop::unconstrained(async {
                    for _ in 0..(coop::BUDGET * 4) {
                        coop::consume_budget().await;
                    }
                    coop::has_budget_remaining()
                })
                .await;
                (constrained, p.load(SeqCst) - before, budget_left)
            });
            let (constrained, unconstrained, budget_left) = looped.await.unwrap();
            stop.store(true, SeqCst);
            neighbour.await.unwrap();
            assert!(constrained >= 3, "the neighbour ran {constrained} times");
            assert_eq!(unconstrained, 0, "an unconstrained loop yielded");
            assert!(budget_left);
        });
    });
}

#[test]
fn has_budget_remaining_turns_false_when_spent() {
    within("has_budget_remaining", || {
        let rt = common::rt(1);
        let (before, after) = rt
            .block_on(rt.spawn(async {
                let before = coop::has_budget_remaining();
                std::future::poll_fn(|cx| {
                    while let Poll::Ready(unit) = coop::poll_proceed(cx) {
                        unit.made_progress();
                    }
                    Poll::Ready(())
                })
                .await;
                (before, coop::has_budget_remaining())
            }))
            .unwrap();
        assert!(before && !after);
    });
}

#[test]
fn join_errors_name_their_task_as_tokio_does() {
    within("join error texts", || {
        let rt = common::rt(1);
        rt.block_on(async {
            let err = spawn(async { panic!("boom {}", 12) }).await.unwrap_err();
            let id = err.id();
            assert_eq!(
                err.to_string(),
                format!("task {id} panicked with message \"boom 12\"")
            );
            assert_eq!(
                format!("{err:?}"),
                format!("JoinError::Panic(Id({id}), \"boom 12\", ...)")
            );
            assert_eq!(std::io::Error::from(err).to_string(), "task panicked");

            let err = spawn(async { std::panic::panic_any(7i32) })
                .await
                .unwrap_err();
            let id = err.id();
            assert_eq!(err.to_string(), format!("task {id} panicked"));
            assert_eq!(
                format!("{err:?}"),
                format!("JoinError::Panic(Id({id}), ...)")
            );

            let task = spawn(std::future::pending::<()>());
            task.abort();
            let err = task.await.unwrap_err();
            let id = err.id();
            assert_eq!(err.to_string(), format!("task {id} was cancelled"));
            assert_eq!(
                format!("{err:?}"),
                format!("JoinError::Cancelled(Id({id}))")
            );
            assert_eq!(std::io::Error::from(err).to_string(), "task was cancelled");
        });
    });
}

#[test]
fn an_operation_that_stays_pending_gives_its_budget_unit_back() {
    within("restore on pending", || {
        let rt = common::rt(1);
        let granted = rt
            .block_on(rt.spawn(async {
                // Twice the budget of operations that take a unit and end `Pending` (the
                // unit is dropped without `made_progress`): none of them may spend it.
                std::future::poll_fn(|cx| {
                    let mut granted = 0;
                    for _ in 0..coop::BUDGET * 2 {
                        match coop::poll_proceed(cx) {
                            Poll::Ready(unit) => drop(unit),
                            Poll::Pending => break,
                        }
                        granted += 1;
                    }
                    Poll::Ready(granted)
                })
                .await
            }))
            .unwrap();
        assert_eq!(granted, coop::BUDGET * 2);
    });
}
