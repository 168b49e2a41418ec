//! File throughput and small-file rate: `spinpark::fs` against `tokio::fs`, in the same run.
//!
//! ```text
//! cargo bench --bench fs                      # 256 MiB file, 10,000 small files, 5 rounds
//! cargo bench --bench fs -- --file-mib 8 --files 200 --rounds 2   # a quick look
//! ```
//!
//! Two cases, each in rounds that alternate which runtime goes first (one runtime of each,
//! default settings, kept for the whole run so their blocking pools stay warm):
//!
//! * **big file**: a file of `--file-mib` MiB written through `File` in `--chunk-kib` KiB
//!   writes (then flushed), then read back through `File` in reads of the same size. Printed
//!   in MiB/s, write and read apart. The reads come from the page cache, and nothing is
//!   synced to the disk, so this measures the path through the runtime, not the disk.
//! * **small files**: `--files` files of `--small-bytes` bytes, each created with
//!   `File::create`, written and flushed, read back with `fs::read` and removed with
//!   `fs::remove_file`; by one task, then by `--tasks` tasks sharing the files. Printed in
//!   files per second.
//!
//! Each figure is the median over rounds, with the range; the last column is spinpark's
//! median over tokio's (above 1: spinpark is faster). Not a test: it checks the bytes it
//! reads, and asserts nothing else.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

/// The command line (`cargo bench --bench fs -- --help`).
#[derive(clap::Parser)]
#[command(
    name = "fs",
    bin_name = "cargo bench --bench fs --",
    about = "spinpark::fs against tokio::fs: a big file written and read in chunks (MiB/s), \
             and small files created, written, read and removed (files/s)"
)]
struct Cli {
    /// Size of the big file, in MiB
    #[arg(long, default_value_t = 256, value_name = "MIB")]
    file_mib: usize,
    /// Size of each write and read of the big file, in KiB
    #[arg(long, default_value_t = 64, value_name = "KIB")]
    chunk_kib: usize,
    /// How many small files per round
    #[arg(long, default_value_t = 10_000, value_name = "N")]
    files: usize,
    /// Size of each small file, in bytes
    #[arg(long, default_value_t = 1024, value_name = "BYTES")]
    small_bytes: usize,
    /// How many tasks share the small files in the concurrent row
    #[arg(long, default_value_t = 64, value_name = "N")]
    tasks: usize,
    /// Rounds per case (each runtime runs once per round)
    #[arg(long, default_value_t = 5, value_name = "N")]
    rounds: usize,
    /// Where the files go (a directory of the bench's own is made in it and removed)
    #[arg(long, value_name = "DIR")]
    dir: Option<PathBuf>,
    /// Passed by `cargo bench`
    #[arg(long, hide = true)]
    bench: bool,
    /// A name filter, passed by `cargo bench NAME` (ignored)
    #[arg(hide = true)]
    filter: Vec<String>,
}

/// What to do, from the command line.
#[derive(Clone)]
struct Plan {
    file_bytes: usize,
    chunk: usize,
    files: usize,
    small: usize,
    tasks: usize,
}

/// One round's figures for one runtime: big-file write and read (MiB/s), small files by
/// one task and by many (files/s).
#[derive(Clone, Copy, Default)]
struct Figures {
    write: f64,
    read: f64,
    small_one: f64,
    small_many: f64,
}

fn mib_per_s(bytes: usize, took: Duration) -> f64 {
    bytes as f64 / (1 << 20) as f64 / took.as_secs_f64()
}

fn per_s(n: usize, took: Duration) -> f64 {
    n as f64 / took.as_secs_f64()
}

/// `n` bytes that differ from position to position.
fn pattern(n: usize) -> Vec<u8> {
    (0..n).map(|i| (i % 251) as u8).collect()
}

/// The case runner for one runtime, written once against whichever `fs` and I/O traits.
macro_rules! cases {
    ($name:ident, $fs:path, $spawn:path, { $($traits:tt)* }) => {
        mod $name {
            use super::*;
            use $fs as fs;
            use $($traits)*;

            pub(crate) async fn big(plan: &Plan, path: &Path) -> (f64, f64) {
                let chunk = pattern(plan.chunk);
                let start = Instant::now();
                let mut file = fs::File::create(path).await.unwrap();
                let mut written = 0;
                while written < plan.file_bytes {
                    let n = chunk.len().min(plan.file_bytes - written);
                    file.write_all(&chunk[..n]).await.unwrap();
                    written += n;
                }
                file.flush().await.unwrap();
                drop(file);
                let write = mib_per_s(written, start.elapsed());

                let mut buf = vec![0; plan.chunk];
                let start = Instant::now();
                let mut file = fs::File::open(path).await.unwrap();
                let mut read = 0;
                loop {
                    let n = file.read(&mut buf).await.unwrap();
                    if n == 0 {
                        break;
                    }
                    read += n;
                }
                let took = start.elapsed();
                assert_eq!(read, written, "read back what was written");
                fs::remove_file(path).await.unwrap();
                (write, mib_per_s(read, took))
            }

            async fn small_files(dir: PathBuf, names: std::ops::Range<usize>, size: usize) {
                let data = pattern(size);
                for i in names {
                    let path = dir.join(i.to_string());
                    let mut file = fs::File::create(&path).await.unwrap();
                    file.write_all(&data).await.unwrap();
                    file.flush().await.unwrap();
                    drop(file);
                    assert_eq!(fs::read(&path).await.unwrap().len(), size);
                    fs::remove_file(&path).await.unwrap();
                }
            }

            pub(crate) async fn small(plan: &Plan, dir: &Path, tasks: usize) -> f64 {
                let start = Instant::now();
                let per = plan.files.div_ceil(tasks);
                let handles: Vec<_> = (0..tasks)
                    .map(|t| {
                        let names = (t * per).min(plan.files)..((t + 1) * per).min(plan.files);
                        $spawn(small_files(dir.to_owned(), names, plan.small))
                    })
                    .collect();
                for h in handles {
                    h.await.unwrap();
                }
                per_s(plan.files, start.elapsed())
            }
        }
    };
}

cases!(on_spinpark, spinpark::fs, spinpark::spawn, {
    futures_util::{AsyncReadExt, AsyncWriteExt}
});
cases!(on_tokio, tokio::fs, tokio::spawn, {
    tokio::io::{AsyncReadExt, AsyncWriteExt}
});

fn round_spinpark(rt: &spinpark::Runtime, plan: &Plan, dir: &Path) -> Figures {
    rt.block_on(async {
        let (write, read) = on_spinpark::big(plan, &dir.join("big")).await;
        let small_one = on_spinpark::small(plan, dir, 1).await;
        let small_many = on_spinpark::small(plan, dir, plan.tasks).await;
        Figures {
            write,
            read,
            small_one,
            small_many,
        }
    })
}

fn round_tokio(rt: &tokio::runtime::Runtime, plan: &Plan, dir: &Path) -> Figures {
    rt.block_on(async {
        let (write, read) = on_tokio::big(plan, &dir.join("big")).await;
        let small_one = on_tokio::small(plan, dir, 1).await;
        let small_many = on_tokio::small(plan, dir, plan.tasks).await;
        Figures {
            write,
            read,
            small_one,
            small_many,
        }
    })
}

/// Median and range of `v`.
fn summary(mut v: Vec<f64>) -> (f64, f64, f64) {
    v.sort_by(f64::total_cmp);
    let n = v.len();
    let median = if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    };
    (median, v[0], v[n - 1])
}

fn cell((median, min, max): (f64, f64, f64)) -> String {
    format!("{median:.0} ({min:.0}-{max:.0})")
}

fn main() {
    use clap::Parser;
    let cli = Cli::parse();
    let plan = Plan {
        file_bytes: cli.file_mib.max(1) << 20,
        chunk: (cli.chunk_kib.max(1)) << 10,
        files: cli.files.max(1),
        small: cli.small_bytes,
        tasks: cli.tasks.max(1),
    };
    let rounds = cli.rounds.max(1);
    let base = cli.dir.unwrap_or_else(std::env::temp_dir);
    let dir = base.join(format!("spinpark-bench-fs-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    // Removed at the end, also after a panic in a round.
    struct Cleanup(PathBuf);
    impl Drop for Cleanup {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }
    let _cleanup = Cleanup(dir.clone());

    let sp = spinpark::Runtime::new().unwrap();
    let tk = tokio::runtime::Runtime::new().unwrap();
    println!(
        "big file: {} MiB in {} KiB chunks; small files: {} of {} bytes, by 1 task and by {} \
         tasks; {rounds} rounds, runtimes alternating; in {}\n",
        cli.file_mib.max(1),
        cli.chunk_kib.max(1),
        plan.files,
        plan.small,
        plan.tasks,
        dir.display()
    );
    let (mut s, mut t) = (Vec::new(), Vec::new());
    for round in 0..rounds {
        if round % 2 == 0 {
            s.push(round_spinpark(&sp, &plan, &dir));
            t.push(round_tokio(&tk, &plan, &dir));
        } else {
            t.push(round_tokio(&tk, &plan, &dir));
            s.push(round_spinpark(&sp, &plan, &dir));
        }
        eprintln!("round {} of {rounds} done", round + 1);
    }

    println!("| case | spinpark | tokio | spinpark / tokio |");
    println!("|---|---|---|---|");
    let rows: [(&str, fn(&Figures) -> f64); 4] = [
        ("big file write, MiB/s", |f| f.write),
        ("big file read, MiB/s", |f| f.read),
        ("small files, 1 task, files/s", |f| f.small_one),
        ("small files, many tasks, files/s", |f| f.small_many),
    ];
    for (name, get) in rows {
        let a = summary(s.iter().map(get).collect());
        let b = summary(t.iter().map(get).collect());
        println!("| {name} | {} | {} | {:.2} |", cell(a), cell(b), a.0 / b.0);
    }
}
