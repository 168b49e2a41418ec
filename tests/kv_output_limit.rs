//! The key-value server's output limit over TCP: a reply larger than the limit is answered
//! `-ERR ... output limit ...` and the connection is closed (the client learns why), while a
//! pipeline whose replies add up to more than the limit is served in full, each reply written
//! out before the next is built, so nothing waiting to be sent ever passes the limit.

use examples_common::kv::{self, Store, DEFAULT_MAX_OUTPUT};
use examples_common::resp::encode_command;

use std::time::Duration;

use futures_util::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use spinpark::net::{TcpListener, TcpStream};
use spinpark::time::timeout;

const LIMIT: Duration = Duration::from_secs(60);
const VALUE: usize = 1 << 20;
/// More copies of the value than fit in the limit.
const COPIES: usize = DEFAULT_MAX_OUTPUT / VALUE + 16;

/// Runs `test` against a server with the default settings on an ephemeral port.
fn with_server<Fut: std::future::Future<Output = ()>>(test: impl FnOnce(TcpStream) -> Fut) {
    let rt = spinpark::Builder::new().worker_threads(2).build().unwrap();
    rt.block_on(async {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let addr = listener.local_addr().unwrap();
        spinpark::spawn(kv::serve(listener, Store::new()));
        let mut c = TcpStream::connect(addr).await.unwrap();
        let value = vec![b'v'; VALUE];
        c.write_all(&encode_command([&b"SET"[..], b"v", &value]))
            .await
            .unwrap();
        let mut ok = [0u8; 5];
        c.read_exact(&mut ok).await.unwrap();
        assert_eq!(&ok, b"+OK\r\n");
        timeout(LIMIT, test(c))
            .await
            .unwrap_or_else(|_| panic!("the test did not finish within {LIMIT:?}"));
    });
}

#[test]
fn a_reply_over_the_output_limit_is_an_error_and_closes_the_connection() {
    with_server(|c| async move {
        let mget = encode_command(std::iter::once(&b"MGET"[..]).chain(vec![&b"v"[..]; COPIES]));
        let mut c = BufReader::new(c);
        c.get_mut().write_all(&mget).await.unwrap();
        let mut line = String::new();
        c.read_line(&mut line).await.unwrap();
        assert!(
            line.starts_with("-ERR ") && line.contains("output limit"),
            "an MGET of {COPIES} MiB got {:?}",
            &line[..line.len().min(100)]
        );
        let mut rest = Vec::new();
        c.read_to_end(&mut rest).await.unwrap();
        assert!(rest.is_empty(), "{} more bytes after the error", rest.len());
    });
}

#[test]
fn a_pipeline_whose_replies_pass_the_limit_together_is_served_in_full() {
    with_server(|c| async move {
        let get = encode_command(["GET", "v"]);
        let mut c = BufReader::new(c);
        c.get_mut().write_all(&get.repeat(COPIES)).await.unwrap();
        let mut body = vec![0u8; VALUE + 2];
        for i in 0..COPIES {
            let mut line = String::new();
            c.read_line(&mut line).await.unwrap();
            assert_eq!(line, format!("${VALUE}\r\n"), "reply {i}");
            c.read_exact(&mut body).await.unwrap();
            assert!(body[..VALUE].iter().all(|&b| b == b'v') && body.ends_with(b"\r\n"));
        }
        // Still open and serving.
        c.get_mut()
            .write_all(&encode_command(["PING"]))
            .await
            .unwrap();
        let mut line = String::new();
        c.read_line(&mut line).await.unwrap();
        assert_eq!(line, "+PONG\r\n");
    });
}
