//! Echo servers on the io_uring runtimes a user would pick instead of spinpark (monoio,
//! glommio, compio), for the rpc bench's `--only pipelined` rows.
//!
//! ```text
//! spinpark-peers monoio|glommio|compio
//! ```
//!
//! Each speaks the bench's protocol exactly as its own servers do (`control.rs` for stdin and
//! stdout, `frame.rs` for the wire) with one worker thread, in the style each runtime's users
//! write: monoio and compio on their io_uring drivers with owned buffers, glommio through its
//! futures-io `TcpStream`. The bench builds this crate on demand (it is outside the
//! workspace) and starts one process per server, pinned to the server CPUs.

mod compio_echo;
mod control;
mod frame;
mod glommio_echo;
mod monoio_echo;

use control::Listening;

/// Starts a server's worker thread, which reports its port (or why it has none).
type Start = fn(Listening) -> std::io::Result<()>;

/// The runtimes, by the name given on the command line.
const SERVERS: [(&str, Start); 3] = [
    ("monoio", monoio_echo::start),
    ("glommio", glommio_echo::start),
    ("compio", compio_echo::start),
];

fn main() {
    let name = std::env::args().nth(1).unwrap_or_default();
    let Some((name, start)) = SERVERS.into_iter().find(|(n, _)| *n == name) else {
        let names: Vec<&str> = SERVERS.iter().map(|(n, _)| *n).collect();
        eprintln!("usage: spinpark-peers {}", names.join("|"));
        std::process::exit(2);
    };
    let (listening, port) = Listening::channel();
    if let Err(e) = start(listening) {
        println!("ERROR starting the {name} thread: {e}");
        eprintln!("{name} server: starting its thread: {e}");
        std::process::exit(1);
    }
    control::announce(name, port);
    control::answer_stats();
}
