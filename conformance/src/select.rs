//! Which of tokio's test files are measured, in which set, and why the others are left out.
//!
//! ```text
//! let selection = select(&["rt_common", "fs_file", "tcp_echo", "io_lines"]);
//! // rt_common: task/runtime set; tcp_echo: I/O and time set; io_lines: left out, with a reason
//! ```
//!
//! Six sets: the runtime, tasks, signals and runtime macros; networking, the I/O driver,
//! time and the test clock; the sync primitives (`sync_*`, run against `spinpark::sync`);
//! files and directories (`fs_*`); child processes (`process_*`); and the auto-trait checks
//! of `async_send_sync.rs` (one instance per checked type or function: [`crate::checks`]).
//! Within their name patterns, files for other platforms, files that only compile with
//! `tokio_unstable` (tokio's internals, its io-uring file backend), and the `io_*` files that
//! test tokio's in-memory I/O utilities rather than anything a runtime does, are listed as
//! left out with the reason. Files outside the patterns (`tracing_*`, ...) are not listed one
//! by one.

/// The sets of test files.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Set {
    /// Runtime, tasks, signals, runtime macros.
    TaskRuntime,
    /// Networking, the I/O driver, time, the test clock.
    IoTime,
    /// The sync primitives and channels.
    Sync,
    /// Files and directories.
    Fs,
    /// Child processes.
    Process,
    /// Send, Sync and Unpin of every type and future.
    AutoTraits,
}

impl Set {
    /// Every set, in the order the report lists them.
    pub(crate) const ALL: [Set; 6] = [
        Set::TaskRuntime,
        Set::IoTime,
        Set::Sync,
        Set::Fs,
        Set::Process,
        Set::AutoTraits,
    ];

    pub(crate) fn title(self) -> &'static str {
        match self {
            Set::TaskRuntime => "runtime, tasks, signals and macros",
            Set::IoTime => "networking, I/O driver and time",
            Set::Sync => "sync primitives and channels",
            Set::Fs => "files and directories",
            Set::Process => "child processes",
            Set::AutoTraits => "auto traits (Send, Sync, Unpin)",
        }
    }
}

/// The chosen files and the ones left out.
#[derive(Debug, Default)]
pub(crate) struct Selection {
    pub(crate) files: Vec<(String, Set)>,
    pub(crate) left_out: Vec<(String, &'static str)>,
}

/// The `io_*` files that exercise the runtime: the I/O driver, `AsyncFd`, sockets, tasks.
const RUNTIME_IO: &[&str] = &[
    "io_async_fd",
    "io_copy_bidirectional",
    "io_driver",
    "io_driver_drop",
    "io_mem_stream",
    "io_panic",
];

/// Files inside the sets' patterns that only compile with `tokio_unstable`.
const UNSTABLE_ONLY: &[&str] = &[
    "rt_poll_callbacks",
    "task_builder",
    "task_hooks",
    "time_alt",
];

fn set_of(name: &str) -> Option<Set> {
    let task = ["rt_", "task_", "signal_", "macros_"];
    let task_exact = ["join_handle_panic", "coop_budget", "no_rt", "unwindsafe"];
    let io = ["tcp_", "uds_", "net_", "io_", "time_"];
    let io_exact = ["udp", "unix_shutdown", "buffered", "test_clock"];
    if task.iter().any(|p| name.starts_with(p)) || task_exact.contains(&name) {
        Some(Set::TaskRuntime)
    } else if io.iter().any(|p| name.starts_with(p)) || io_exact.contains(&name) {
        Some(Set::IoTime)
    } else if name.starts_with("sync_") {
        Some(Set::Sync)
    } else if name.starts_with("fs_") {
        Some(Set::Fs)
    } else if name.starts_with("process_") {
        Some(Set::Process)
    } else if name == "async_send_sync" {
        Some(Set::AutoTraits)
    } else {
        None
    }
}

fn left_out(name: &str) -> Option<&'static str> {
    if name.contains("emscripten") {
        return Some("emscripten only");
    }
    if name.contains("wasm") {
        return Some("wasm only");
    }
    if name == "net_named_pipe" || name.ends_with("_windows") || name == "process_raw_handle" {
        return Some("Windows only");
    }
    if name.starts_with("fs_uring") {
        return Some("tokio's io-uring file backend, behind tokio_unstable");
    }
    if name == "io_poll_aio" {
        return Some("FreeBSD only");
    }
    if name.starts_with("rt_unstable_") || name.starts_with("task_trace_") {
        return Some("tokio internals behind tokio_unstable (unstable metrics, task dumps)");
    }
    if UNSTABLE_ONLY.contains(&name) {
        return Some("the whole file needs tokio_unstable");
    }
    if name.starts_with("io_") && !RUNTIME_IO.contains(&name) {
        return Some("tokio's in-memory I/O utilities (re-exported from tokio): no runtime in it");
    }
    None
}

/// Sorts tokio's test file names (without `.rs`) into the sets and the left-out list.
pub(crate) fn select<S: AsRef<str>>(names: &[S]) -> Selection {
    let mut out = Selection::default();
    for name in names {
        let name = name.as_ref();
        let Some(set) = set_of(name) else {
            continue;
        };
        match left_out(name) {
            Some(reason) => out.left_out.push((name.to_string(), reason)),
            None => out.files.push((name.to_string(), set)),
        }
    }
    out.files.sort();
    out.left_out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sorts_files_into_sets() {
        let names = [
            "rt_common",
            "task_local_set",
            "signal_usr1",
            "macros_select",
            "no_rt",
            "unwindsafe",
            "tcp_echo",
            "udp",
            "time_sleep",
            "test_clock",
            "io_async_fd",
            "io_lines",
            "fs_file",
            "fs_uring_read",
            "fs_open_options_windows",
            "process_smoke",
            "process_raw_handle",
            "async_send_sync",
            "sync_mpsc",
            "sync_emscripten_blocking",
            "rt_unstable_metrics",
            "time_wasm",
            "net_named_pipe",
            "task_hooks",
            "rt_emscripten_jspi",
        ];
        let s = select(&names);
        let files: Vec<(&str, Set)> = s.files.iter().map(|(n, set)| (n.as_str(), *set)).collect();
        assert!(files.contains(&("rt_common", Set::TaskRuntime)));
        assert!(files.contains(&("no_rt", Set::TaskRuntime)));
        assert!(files.contains(&("tcp_echo", Set::IoTime)));
        assert!(files.contains(&("io_async_fd", Set::IoTime)));
        assert!(files.contains(&("test_clock", Set::IoTime)));
        assert!(files.contains(&("sync_mpsc", Set::Sync)));
        assert!(files.contains(&("fs_file", Set::Fs)));
        assert!(files.contains(&("process_smoke", Set::Process)));
        assert!(files.contains(&("async_send_sync", Set::AutoTraits)));
        assert_eq!(files.len(), 15);
        let out: Vec<&str> = s.left_out.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(
            out,
            [
                "fs_open_options_windows",
                "fs_uring_read",
                "io_lines",
                "net_named_pipe",
                "process_raw_handle",
                "rt_emscripten_jspi",
                "rt_unstable_metrics",
                "sync_emscripten_blocking",
                "task_hooks",
                "time_wasm"
            ]
        );
    }
}
