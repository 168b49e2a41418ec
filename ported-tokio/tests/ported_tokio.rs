//! Typical tokio tests of timing code, ported to spinpark by changing the paths only: each
//! test body below is compiled twice, once with `rt` = `tokio` (the original, run on tokio's
//! runtime with tokio's `test-util`) and once with `rt` = `spinpark`, and both must pass.
//!
//! Written as tokio users write them: `#[tokio::test(start_paused = true)]`, or
//! `#[tokio::test]` then `time::pause()`, `time::advance(..).await`, `sleep`, `sleep_until`,
//! `timeout`, `interval` and `Instant::now()`, with a background expiry task woken through
//! `tokio::sync::Notify` (which spinpark runs as it is).

/// Compiles the tests once per runtime. The paths the test bodies use are the only
/// difference: `rt::{test, spawn}` and `time::{..}`.
macro_rules! on_both_runtimes {
    ($($body:item)*) => {
        mod on_tokio {
            use tokio as rt;
            use tokio::time::{self, Duration, Instant};
            $($body)*
        }
        mod on_spinpark {
            use spinpark as rt;
            use spinpark::time::{self, Duration, Instant};
            $($body)*
        }
    };
}

on_both_runtimes! {
    /// A cache whose entries expire: a background task sleeps until the next expiry (or until
    /// a new entry may change it) and removes what is due, as key-value servers do.
    #[derive(Clone)]
    struct Cache {
        shared: std::sync::Arc<Shared>,
    }

    struct Shared {
        entries: std::sync::Mutex<std::collections::BTreeMap<&'static str, (u32, Instant)>>,
        changed: tokio::sync::Notify,
    }

    impl Cache {
        fn new() -> Cache {
            let shared = std::sync::Arc::new(Shared {
                entries: Default::default(),
                changed: tokio::sync::Notify::new(),
            });
            rt::spawn(purge(shared.clone()));
            Cache { shared }
        }

        fn set(&self, key: &'static str, value: u32, ttl: Duration) {
            let expires = Instant::now() + ttl;
            self.shared.entries.lock().unwrap().insert(key, (value, expires));
            self.shared.changed.notify_one();
        }

        fn get(&self, key: &str) -> Option<u32> {
            self.shared.entries.lock().unwrap().get(key).map(|e| e.0)
        }

        fn len(&self) -> usize {
            self.shared.entries.lock().unwrap().len()
        }
    }

    async fn purge(shared: std::sync::Arc<Shared>) {
        loop {
            let next = {
                let mut entries = shared.entries.lock().unwrap();
                let now = Instant::now();
                entries.retain(|_, e| e.1 > now);
                entries.values().map(|e| e.1).min()
            };
            match next {
                Some(when) => tokio::select! {
                    _ = time::sleep_until(when) => {}
                    _ = shared.changed.notified() => {}
                },
                None => shared.changed.notified().await,
            }
        }
    }

    #[rt::test(start_paused = true)]
    async fn entries_expire_without_waiting() {
        let real = std::time::Instant::now();
        let cache = Cache::new();
        cache.set("a", 1, Duration::from_secs(1));
        cache.set("b", 2, Duration::from_secs(3600));
        assert_eq!(cache.get("a"), Some(1));
        time::sleep(Duration::from_secs(2)).await;
        assert_eq!(cache.get("a"), None, "expired a second ago");
        assert_eq!(cache.get("b"), Some(2));
        time::sleep(Duration::from_secs(3600)).await;
        assert_eq!(cache.len(), 0);
        // An hour of expiry in (much) less than a minute.
        assert!(real.elapsed() < std::time::Duration::from_secs(60));
    }

    #[rt::test]
    async fn timeout_fires_and_advance_moves_the_clock() {
        time::pause();
        let start = Instant::now();
        let slow = rt::spawn(async {
            time::sleep(Duration::from_secs(10)).await;
            "slow"
        });
        let res = time::timeout(Duration::from_secs(5), slow).await;
        assert!(res.is_err(), "the timeout should win");
        // tokio's timers round deadlines up to its 1 ms tick: compare with a margin.
        let waited = Instant::now() - start;
        assert!(waited >= Duration::from_secs(5) && waited < Duration::from_secs(6), "{waited:?}");
        time::advance(Duration::from_secs(60)).await;
        let waited = start.elapsed();
        assert!(waited >= Duration::from_secs(65) && waited < Duration::from_secs(66), "{waited:?}");
        let fast = time::timeout(Duration::from_secs(5), async { 7 }).await;
        assert_eq!(fast.unwrap(), 7);
    }

    #[rt::test(start_paused = true)]
    async fn interval_catches_up_after_advance() {
        let start = Instant::now();
        let mut every = time::interval(Duration::from_secs(1));
        assert_eq!(every.tick().await, start);
        time::advance(Duration::from_millis(3500)).await;
        // The missed ticks complete at once (the default is to burst), each reporting the
        // instant it was scheduled for.
        for k in 1..=3 {
            assert_eq!(every.tick().await, start + Duration::from_secs(k));
        }
        assert_eq!(Instant::now(), start + Duration::from_millis(3500));
        // Back on schedule: the next tick is at 4 s, reached by auto-advance.
        assert_eq!(every.tick().await, start + Duration::from_secs(4));
        assert_eq!(Instant::now(), start + Duration::from_secs(4));
    }
}
