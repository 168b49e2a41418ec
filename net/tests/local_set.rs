//! Local tasks under load on a spinning runtime: a `LocalSet` whose tasks serve TCP echo
//! connections and sleep on timers, driven from `block_on` on a two-worker runtime (idle
//! workers spin by default) while `Send` tasks run beside it, and on a `LocalRuntime`. Every
//! connection must be served with its own bytes, and every timer fire, with state that is not
//! `Send` (an `Rc<RefCell<..>>` tally) shared by the local tasks.

use std::cell::RefCell;
use std::rc::Rc;
use std::time::Duration;

use futures_util::{AsyncReadExt, AsyncWriteExt};
use spinpark_executor::{spawn, spawn_local, Builder, LocalRuntime, LocalSet};
use spinpark_net::time::sleep;
use spinpark_net::{TcpListener, TcpStream};

const CONNS: usize = 16;
const ROUNDS: usize = 20;

/// Serves `CONNS` connections with local tasks, counting requests in a shared `Rc`, while
/// `CONNS` client tasks (`Send`, on the workers) each make `ROUNDS` round trips and a local
/// ticker sleeps; returns (requests counted, ticks).
async fn serve_locally() -> (usize, usize) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let addr = listener.local_addr().unwrap();
    let served = Rc::new(RefCell::new(0usize));
    let ticks = Rc::new(RefCell::new(0usize));
    let t = ticks.clone();
    let ticker = spawn_local(async move {
        for _ in 0..5 {
            sleep(Duration::from_millis(2)).await;
            *t.borrow_mut() += 1;
        }
    });
    let s = served.clone();
    let acceptor = spawn_local(async move {
        let mut conns = Vec::new();
        for _ in 0..CONNS {
            let (mut stream, _) = listener.accept().await.unwrap();
            let s = s.clone();
            conns.push(spawn_local(async move {
                let mut buf = [0u8; 64];
                loop {
                    let n = stream.read(&mut buf).await.unwrap();
                    if n == 0 {
                        return;
                    }
                    *s.borrow_mut() += 1;
                    stream.write_all(&buf[..n]).await.unwrap();
                }
            }));
        }
        for c in conns {
            c.await.unwrap();
        }
    });
    let mut clients = Vec::new();
    for i in 0..CONNS {
        clients.push(spawn(async move {
            let mut c = TcpStream::connect(addr).await.unwrap();
            for r in 0..ROUNDS {
                let msg = format!("{i}:{r}");
                c.write_all(msg.as_bytes()).await.unwrap();
                let mut buf = vec![0u8; msg.len()];
                c.read_exact(&mut buf).await.unwrap();
                assert_eq!(buf, msg.as_bytes(), "connection {i} got another's bytes");
            }
        }));
    }
    for c in clients {
        c.await.unwrap();
    }
    acceptor.await.unwrap();
    ticker.await.unwrap();
    let counted = *served.borrow();
    let ticked = *ticks.borrow();
    (counted, ticked)
}

#[test]
fn local_tasks_serve_sockets_and_timers_on_a_spinning_runtime() {
    let rt = Builder::new().worker_threads(2).build().unwrap();
    let set = LocalSet::new();
    let (served, ticks) = set.block_on(&rt, serve_locally());
    assert_eq!(served, CONNS * ROUNDS);
    assert_eq!(ticks, 5);
}

#[test]
fn local_tasks_serve_sockets_and_timers_on_a_local_runtime() {
    let rt = LocalRuntime::new().unwrap();
    let (served, ticks) = rt.block_on(serve_locally());
    assert_eq!(served, CONNS * ROUNDS);
    assert_eq!(ticks, 5);
}
