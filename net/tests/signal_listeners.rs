//! Many signal listeners: they cost no descriptor each, a signal wakes only its own
//! listeners, and once a signal has a listener, more can be created with no descriptor left.
//! Its own test binary (no other test opens descriptors or raises these signals meanwhile);
//! the tests take a lock so that one's descriptor counts are not disturbed by another.

use std::future::Future;
use std::pin::Pin;
use std::sync::atomic::{AtomicUsize, Ordering::SeqCst};
use std::sync::{Arc, Mutex, MutexGuard};
use std::task::{Context, Poll};
use std::time::Duration;

use futures_util::poll;
use spinpark_executor::{spawn, Builder, Runtime};
use spinpark_net::signal::{ctrl_c, signal, Signal, SignalKind};
use spinpark_net::time::{sleep, timeout};

static SERIAL: Mutex<()> = Mutex::new(());

fn serial() -> MutexGuard<'static, ()> {
    SERIAL.lock().unwrap_or_else(|e| e.into_inner())
}

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

fn open_fds() -> usize {
    std::fs::read_dir("/proc/self/fd").unwrap().count()
}

fn raise(sig: libc::c_int) {
    // SAFETY: kill(2) with our own pid; the handler for `sig` is installed by the caller.
    let r = unsafe { libc::kill(libc::getpid(), sig) };
    assert_eq!(r, 0, "kill: {}", std::io::Error::last_os_error());
}

const PATIENCE: Duration = Duration::from_secs(60);

#[test]
fn a_thousand_listeners_of_one_signal_use_one_descriptor() {
    let _serial = serial();
    rt().block_on(async {
        // The reactor's own descriptors exist before we count.
        sleep(Duration::from_millis(1)).await;
        let before = open_fds();
        let listeners: Vec<Signal> = (0..1000)
            .map(|_| signal(SignalKind::user_defined2()).unwrap())
            .collect();
        let after = open_fds();
        // One eventfd for the signal, however many listen (each listener used to dup one).
        assert!(
            after <= before + 1,
            "1000 listeners of one signal: {before} descriptors before, {after} after"
        );
        drop(listeners);
    });
}

/// Counts the polls of a future.
struct CountPolls<F> {
    fut: Pin<Box<F>>,
    polls: Arc<AtomicUsize>,
}

impl<F: Future> Future for CountPolls<F> {
    type Output = F::Output;
    fn poll(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<F::Output> {
        self.polls.fetch_add(1, SeqCst);
        self.fut.as_mut().poll(cx)
    }
}

#[test]
fn a_signal_wakes_its_own_listeners_only() {
    let _serial = serial();
    rt().block_on(async {
        let mut usr1 = signal(SignalKind::user_defined1()).unwrap();
        let polls = Arc::new(AtomicUsize::new(0));
        let usr2 = spawn(CountPolls {
            fut: Box::pin(async {
                let mut usr2 = signal(SignalKind::user_defined2()).unwrap();
                usr2.recv().await
            }),
            polls: polls.clone(),
        });
        for _ in 0..30_000 {
            if polls.load(SeqCst) > 0 {
                break;
            }
            sleep(Duration::from_millis(1)).await;
        }
        assert_eq!(
            polls.load(SeqCst),
            1,
            "the SIGUSR2 listener never got to wait"
        );
        for i in 0..20 {
            raise(libc::SIGUSR1);
            assert_eq!(
                timeout(PATIENCE, usr1.recv()).await,
                Ok(Some(())),
                "SIGUSR1 #{i} was not delivered"
            );
        }
        // Give a wrongly woken task time to be polled (this bounds nothing: a task that is
        // not woken is not polled however long we wait).
        sleep(Duration::from_millis(200)).await;
        assert_eq!(
            polls.load(SeqCst),
            1,
            "20 SIGUSR1 woke the task waiting for SIGUSR2"
        );
        raise(libc::SIGUSR2);
        let got = timeout(PATIENCE, usr2)
            .await
            .expect("SIGUSR2 was not delivered");
        assert_eq!(got.unwrap(), Some(()));
    });
}

#[test]
fn with_no_descriptor_left_more_listeners_of_a_signal_still_register() {
    let _serial = serial();
    rt().block_on(async {
        // The first listener of the signal exists (and the reactor's descriptors).
        let first = signal(SignalKind::interrupt()).unwrap();
        // Use up every descriptor, under a lowered limit so that this stays small.
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        // SAFETY: getrlimit fills the valid rlimit struct on our stack.
        assert_eq!(unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) }, 0);
        let saved = lim;
        lim.rlim_cur = (open_fds() + 64) as libc::rlim_t;
        // SAFETY: setrlimit reads a valid rlimit struct on our stack.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &lim) }, 0);
        let mut hog = Vec::new();
        while let Ok(f) = std::fs::File::open("/dev/null") {
            hog.push(f);
            assert!(hog.len() < 10_000, "no descriptor limit");
        }
        // A README-style loop that calls ctrl_c() each turn: its listener registers (it does
        // not end the loop with EMFILE) and waits.
        let mut c = Box::pin(ctrl_c());
        let polled = poll!(c.as_mut());
        let more: Vec<std::io::Result<Signal>> =
            (0..100).map(|_| signal(SignalKind::interrupt())).collect();
        drop(hog);
        // SAFETY: as above.
        assert_eq!(unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &saved) }, 0);
        assert!(
            polled.is_pending(),
            "ctrl_c() with no descriptor left: {polled:?}"
        );
        for r in more {
            r.expect("a listener with no descriptor left");
        }
        // And it works.
        raise(libc::SIGINT);
        timeout(PATIENCE, c)
            .await
            .expect("ctrl_c did not see the SIGINT")
            .unwrap();
        drop(first);
    });
}
