//! Where the benchmark's processes run: the two layouts and the CPU pinning behind them.
//!
//! ```text
//! let layout = Layout::remote().unwrap(); // on 2 CPUs: server on CPU 1, client on CPU 0
//! pin_current(layout.client_cpus())?;     // this thread, and the threads it spawns
//! let child = spawn_on(layout.server_cpus(), &mut cmd)?; // a process and all its threads
//! ```
//!
//! *remote* emulates a client on another host: the server processes get one set of CPUs and
//! the load generator a disjoint one (the first half of the allowed CPUs, at least one, is the
//! client's). *colocated* leaves placement to the scheduler, as for a sidecar or a local
//! client. Pinning is `sched_setaffinity`, which a thread passes on to the threads and
//! processes it creates: a server is spawned from a short-lived thread pinned to the server set.

use std::io;
use std::process::{Child, Command};

/// The CPUs this process may run on, in ascending order.
pub fn allowed() -> Vec<usize> {
    // SAFETY: cpu_set_t is a plain bit set (all-zero is empty), and sched_getaffinity writes
    // at most size_of::<cpu_set_t>() bytes into it.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return (0..std::thread::available_parallelism().map_or(1, |n| n.get())).collect();
        }
        set
    };
    (0..libc::CPU_SETSIZE as usize)
        // SAFETY: CPU_ISSET reads one bit of the set, and `c` is below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect()
}

/// Pins the calling thread (and what it spawns from now on) to `cpus`.
pub fn pin_current(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: as in `allowed`; CPU_SET only touches bits inside the set.
    let set = unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        for &c in cpus {
            libc::CPU_SET(c, &mut set);
        }
        set
    };
    // SAFETY: the set lives on our stack for the whole call and its size is passed along.
    let rc = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if rc != 0 {
        let e = io::Error::last_os_error();
        return Err(io::Error::new(
            e.kind(),
            format!("pinning to CPUs {}: {e}", fmt_cpus(cpus)),
        ));
    }
    Ok(())
}

/// Spawns `cmd` with every thread of the new process confined to `cpus`.
pub fn spawn_on(cpus: &[usize], cmd: &mut Command) -> io::Result<Child> {
    std::thread::scope(|s| {
        s.spawn(|| {
            pin_current(cpus)?;
            cmd.spawn()
        })
        .join()
        .expect("spawner thread")
    })
}

/// `0-3`, `1`, `0,2,5`.
pub fn fmt_cpus(cpus: &[usize]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let mut j = i;
        while j + 1 < cpus.len() && cpus[j + 1] == cpus[j] + 1 {
            j += 1;
        }
        out.push(if j > i + 1 {
            format!("{}-{}", cpus[i], cpus[j])
        } else if j == i + 1 {
            format!("{},{}", cpus[i], cpus[j])
        } else {
            cpus[i].to_string()
        });
        i = j + 1;
    }
    out.join(",")
}

/// Where the servers and the load generator run.
#[derive(Debug, Clone)]
pub enum Layout {
    /// Disjoint CPU sets for the servers and the load generator.
    Remote {
        server: Vec<usize>,
        client: Vec<usize>,
    },
    /// Everyone on every allowed CPU; the scheduler decides.
    Colocated { all: Vec<usize> },
}

impl Layout {
    /// The remote layout, or `None` with fewer than 2 allowed CPUs.
    pub fn remote() -> Option<Layout> {
        let all = allowed();
        if all.len() < 2 {
            return None;
        }
        let split = (all.len() / 2).max(1);
        Some(Layout::Remote {
            client: all[..split].to_vec(),
            server: all[split..].to_vec(),
        })
    }

    pub fn colocated() -> Layout {
        Layout::Colocated { all: allowed() }
    }

    pub fn is_remote(&self) -> bool {
        matches!(self, Layout::Remote { .. })
    }

    pub fn name(&self) -> &'static str {
        match self {
            Layout::Remote { .. } => "remote",
            Layout::Colocated { .. } => "colocated",
        }
    }

    pub fn server_cpus(&self) -> &[usize] {
        match self {
            Layout::Remote { server, .. } => server,
            Layout::Colocated { all } => all,
        }
    }

    pub fn client_cpus(&self) -> &[usize] {
        match self {
            Layout::Remote { client, .. } => client,
            Layout::Colocated { all } => all,
        }
    }

    /// `server on CPU 1, load generator on CPU 0`.
    pub fn describe(&self) -> String {
        let cpus =
            |s: &[usize]| format!("CPU{} {}", if s.len() > 1 { "s" } else { "" }, fmt_cpus(s));
        match self {
            Layout::Remote { server, client } => format!(
                "servers pinned to {}, load generator pinned to {}",
                cpus(server),
                cpus(client)
            ),
            Layout::Colocated { all } => {
                format!("servers and load generator unpinned on {}", cpus(all))
            }
        }
    }
}
