//! The benchmark's echo servers: the same handler shape on spinpark and on tokio, each run in
//! its own process (the bench binary re-executes itself with `--serve RUNTIME`).
//!
//! The server prints `PORT n` once it listens, then answers `STATS` lines on stdin with its
//! own resource usage (all threads, from `getrusage(RUSAGE_SELF)`), and exits at end of input.

use std::io::{self, BufRead, Write};
use std::time::Duration;

use crate::echo_proto::{serve_futures_io, FrameReader, DEFAULT_MAX_FRAME};

/// What a server reports about itself.
#[derive(Debug, Clone, Copy, Default)]
pub struct Usage {
    pub user_us: u64,
    pub sys_us: u64,
    pub vol_cs: u64,
    pub invol_cs: u64,
}

impl Usage {
    pub fn now() -> Usage {
        // SAFETY: rusage is plain old data (all-zero is valid), and getrusage fills the valid
        // struct on our stack.
        let ru = unsafe {
            let mut ru: libc::rusage = std::mem::zeroed();
            libc::getrusage(libc::RUSAGE_SELF, &mut ru);
            ru
        };
        let us = |t: libc::timeval| t.tv_sec as u64 * 1_000_000 + t.tv_usec as u64;
        Usage {
            user_us: us(ru.ru_utime),
            sys_us: us(ru.ru_stime),
            vol_cs: ru.ru_nvcsw as u64,
            invol_cs: ru.ru_nivcsw as u64,
        }
    }

    pub fn since(self, before: Usage) -> Usage {
        Usage {
            user_us: self.user_us - before.user_us,
            sys_us: self.sys_us - before.sys_us,
            vol_cs: self.vol_cs - before.vol_cs,
            invol_cs: self.invol_cs - before.invol_cs,
        }
    }

    pub fn parse(line: &str) -> Option<Usage> {
        let mut it = line.split_whitespace();
        if it.next()? != "STATS" {
            return None;
        }
        let mut n = || it.next()?.parse().ok();
        Some(Usage {
            user_us: n()?,
            sys_us: n()?,
            vol_cs: n()?,
            invol_cs: n()?,
        })
    }
}

/// Answers `STATS` on stdin until it closes, then exits the process.
fn control_loop() -> ! {
    let stdin = io::stdin();
    for line in stdin.lock().lines() {
        let Ok(line) = line else { break };
        if line.trim() == "STATS" {
            let u = Usage::now();
            println!(
                "STATS {} {} {} {}",
                u.user_us, u.sys_us, u.vol_cs, u.invol_cs
            );
            io::stdout().flush().ok();
        }
    }
    std::process::exit(0);
}

pub fn serve(runtime: &str, workers: usize, spin: Option<Duration>) {
    match runtime {
        "spinpark" => serve_spinpark(workers, spin),
        "tokio" => serve_tokio(workers),
        other => panic!("unknown runtime {other}"),
    }
}

fn serve_spinpark(workers: usize, spin: Option<Duration>) {
    let mut b = spinpark::Builder::new().worker_threads(workers);
    if let Some(s) = spin {
        b = b.spin(s);
    }
    let rt = b.build().expect("spinpark runtime");
    let listener = rt
        .block_on(spinpark::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    println!("PORT {}", listener.local_addr().unwrap().port());
    io::stdout().flush().ok();
    rt.spawn(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("spinpark server: accept: {e}");
                    continue;
                }
            };
            stream.set_nodelay(true).ok();
            spinpark::spawn(async move {
                if let Err(e) = serve_futures_io(stream, DEFAULT_MAX_FRAME).await {
                    eprintln!("spinpark server: closing a connection: {e}");
                }
            });
        }
    });
    control_loop();
}

fn serve_tokio(workers: usize) {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .enable_all()
        .build()
        .expect("tokio runtime");
    let listener = rt
        .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
        .expect("bind");
    println!("PORT {}", listener.local_addr().unwrap().port());
    io::stdout().flush().ok();
    rt.spawn(async move {
        loop {
            let (stream, _) = match listener.accept().await {
                Ok(s) => s,
                Err(e) => {
                    eprintln!("tokio server: accept: {e}");
                    continue;
                }
            };
            stream.set_nodelay(true).ok();
            tokio::spawn(async move {
                if let Err(e) = serve_tokio_conn(stream, DEFAULT_MAX_FRAME).await {
                    eprintln!("tokio server: closing a connection: {e}");
                }
            });
        }
    });
    control_loop();
}

/// The same handler as `serve_futures_io`, written against tokio's I/O traits.
async fn serve_tokio_conn(stream: tokio::net::TcpStream, max: usize) -> io::Result<u64> {
    use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
    let mut stream = BufReader::with_capacity(16 * 1024, stream);
    let mut frames = FrameReader::new(max);
    let mut served = 0;
    loop {
        let n = stream.read(frames.spare()).await?;
        if n == 0 {
            return match frames.is_empty() {
                true => Ok(served),
                false => Err(frames.eof_error()),
            };
        }
        if frames.filled(n)? {
            stream.get_mut().write_all(frames.frame()).await?;
            frames.consume();
            served += 1;
        }
    }
}
