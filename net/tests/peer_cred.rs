//! `UnixStream::peer_cred`: both ends of a pair, and an accepted connection, see this
//! process.

use spinpark_executor::{Builder, Runtime};
use spinpark_net::{UnixListener, UnixStream};

fn rt() -> Runtime {
    Builder::new().worker_threads(2).build().unwrap()
}

#[test]
fn both_ends_see_this_process() {
    rt().block_on(async {
        let (a, b) = UnixStream::pair().unwrap();
        let (ca, cb) = (a.peer_cred().unwrap(), b.peer_cred().unwrap());
        assert_eq!(ca, cb);
        // SAFETY: geteuid/getegid have no preconditions.
        let (uid, gid) = unsafe { (libc::geteuid(), libc::getegid()) };
        assert_eq!((ca.uid(), ca.gid()), (uid, gid));
        assert_eq!(ca.pid(), Some(std::process::id() as libc::pid_t));

        let dir = std::env::temp_dir().join(format!("spinpark-cred-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("sock");
        let listener = UnixListener::bind(&path).unwrap();
        let client = UnixStream::connect(&path).await.unwrap();
        let (server, _) = listener.accept().await.unwrap();
        assert_eq!(server.peer_cred().unwrap(), client.peer_cred().unwrap());
        std::fs::remove_dir_all(&dir).unwrap();
    });
}
