//! Property tests of the two wire parsers, the echo protocol's `FrameReader` and the RESP
//! `Parser` (driven the way `kv::serve_conn` drives it, with its `read_window`): random and
//! mutated byte streams, split at random points, never panic and never make the parser hold
//! more memory than a bound proportional to the bytes received; valid pipelines round-trip.
//!
//! Each property runs 64 cases by default, a few seconds in all. For a longer run:
//!
//! ```text
//! PROPTEST_CASES=20000 cargo test --release --test wire_props
//! ```

use examples_common::echo_proto::{self, FrameReader, KEEP_CAPACITY, READ_AHEAD};
use examples_common::kv::{read_window, READ_CHUNK};
use examples_common::resp::{encode_command, parse_reply, Args, Parser, Reply};

use proptest::prelude::*;

/// `PROPTEST_CASES`, or 64.
fn config() -> ProptestConfig {
    let cases = std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(64);
    ProptestConfig {
        cases,
        failure_persistence: None,
        ..ProptestConfig::default()
    }
}

/// Cuts `bytes` at the given points (taken modulo its length), in order.
fn split<'a>(bytes: &'a [u8], cuts: &[usize]) -> Vec<&'a [u8]> {
    let mut at: Vec<usize> = cuts
        .iter()
        .map(|c| c % (bytes.len() + 1))
        .chain([0, bytes.len()])
        .collect();
    at.sort_unstable();
    at.dedup();
    at.windows(2).map(|w| &bytes[w[0]..w[1]]).collect()
}

/// A byte stream edited at a few random places: bytes flipped, inserted or removed.
fn mutate(mut bytes: Vec<u8>, edits: &[(u8, usize, u8)]) -> Vec<u8> {
    for &(kind, at, byte) in edits {
        let at = at % (bytes.len() + 1);
        match kind % 3 {
            0 if at < bytes.len() => bytes[at] ^= byte | 1,
            1 => bytes.insert(at, byte),
            _ if at < bytes.len() => {
                bytes.remove(at);
            }
            _ => {}
        }
    }
    bytes
}

// ---------------------------------------------------------------------------------------------
// Echo frames.

/// Feeds `pieces` to a FrameReader through its `spare`/`filled` window, as a server does, and
/// returns the frames it produced and whether it stopped on an error. Checks the memory bound
/// after every step.
fn run_frames(pieces: &[&[u8]], max: usize) -> (Vec<Vec<u8>>, bool) {
    let mut reader = FrameReader::new(max);
    let mut frames = Vec::new();
    let mut in_frame = 0usize;
    for piece in pieces {
        let mut piece = *piece;
        while !piece.is_empty() {
            let spare = reader.spare();
            assert!(!spare.is_empty(), "an incomplete frame offers room to read");
            let n = spare.len().min(piece.len());
            spare[..n].copy_from_slice(&piece[..n]);
            piece = &piece[n..];
            in_frame += n;
            let done = match reader.filled(n) {
                Ok(done) => done,
                Err(e) => {
                    assert_eq!(e.kind(), std::io::ErrorKind::InvalidData);
                    return (frames, true);
                }
            };
            let bound = 2 * in_frame + READ_AHEAD + KEEP_CAPACITY + 4;
            assert!(
                reader.capacity() <= bound,
                "capacity {} after {in_frame} bytes of a frame",
                reader.capacity()
            );
            if done {
                frames.push(reader.frame().to_vec());
                reader.consume();
                in_frame = 0;
            }
        }
    }
    (frames, false)
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn echo_random_bytes_never_panic_and_stay_bounded(
        bytes in proptest::collection::vec(any::<u8>(), 0..4096),
        cuts in proptest::collection::vec(any::<usize>(), 0..16),
        max in prop_oneof![Just(0usize), Just(1024), Just(u32::MAX as usize)],
    ) {
        let (frames, _) = run_frames(&split(&bytes, &cuts), max);
        for f in frames {
            let n = u32::from_be_bytes(f[..4].try_into().unwrap()) as usize;
            prop_assert_eq!(f.len(), 4 + n);
            prop_assert!(n <= max);
        }
    }

    #[test]
    fn echo_huge_headers_cost_what_arrives(
        announced in (1u32 << 20)..=u32::MAX,
        sent in 0usize..200_000,
        cuts in proptest::collection::vec(any::<usize>(), 0..8),
    ) {
        let mut bytes = announced.to_be_bytes().to_vec();
        bytes.resize(4 + sent, 7);
        let (frames, failed) = run_frames(&split(&bytes, &cuts), u32::MAX as usize);
        prop_assert!(frames.is_empty() && !failed);
    }

    #[test]
    fn echo_pipelines_round_trip(
        payloads in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..3000), 0..12),
        cuts in proptest::collection::vec(any::<usize>(), 0..24),
    ) {
        let wire: Vec<u8> = payloads.iter().flat_map(|p| echo_proto::frame(p)).collect();
        let (frames, failed) = run_frames(&split(&wire, &cuts), 4096);
        prop_assert!(!failed);
        let want: Vec<Vec<u8>> = payloads.iter().map(|p| echo_proto::frame(p)).collect();
        prop_assert_eq!(frames, want);
    }

    #[test]
    fn echo_mutated_pipelines_never_panic_and_stay_bounded(
        payloads in proptest::collection::vec(
            proptest::collection::vec(any::<u8>(), 0..500), 1..8),
        edits in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<u8>()), 1..6),
        cuts in proptest::collection::vec(any::<usize>(), 0..16),
    ) {
        let wire: Vec<u8> = payloads.iter().flat_map(|p| echo_proto::frame(p)).collect();
        let wire = mutate(wire, &edits);
        run_frames(&split(&wire, &cuts), 1 << 20);
    }
}

// ---------------------------------------------------------------------------------------------
// RESP requests.

/// What a connection's loop does with `pieces`: reads each into its buffer through
/// `read_window`, parses every complete request, drops the consumed bytes. Returns the
/// requests and whether it stopped on a protocol error; checks the memory bound throughout.
fn run_resp(pieces: &[&[u8]]) -> (Vec<Args>, bool) {
    let mut parser = Parser::new();
    let mut buf: Vec<u8> = Vec::new();
    let mut requests = Vec::new();
    let mut received = 0usize;
    for piece in pieces {
        let mut piece = *piece;
        while !piece.is_empty() {
            let start = read_window(&mut buf, parser.needs());
            let n = (buf.len() - start).min(piece.len());
            buf[start..start + n].copy_from_slice(&piece[..n]);
            buf.truncate(start + n);
            piece = &piece[n..];
            received += n;
            let mut used = 0;
            loop {
                match parser.parse(&buf[used..]) {
                    Ok(Some((args, k))) => {
                        assert!(k > 0, "a request takes bytes");
                        used += k;
                        if !args.is_empty() {
                            requests.push(args);
                        }
                    }
                    Ok(None) => break,
                    Err(_) => return (requests, true),
                }
            }
            buf.drain(..used);
            let held = buf.capacity() + parser.buffered();
            let bound = 4 * received + 4 * READ_CHUNK;
            assert!(
                held <= bound,
                "{held} bytes held after receiving {received}"
            );
        }
    }
    (requests, false)
}

/// A command: RESP with binary arguments, or an inline line of plain words.
fn command() -> impl Strategy<Value = (bool, Args)> {
    prop_oneof![
        proptest::collection::vec(proptest::collection::vec(any::<u8>(), 0..300), 1..5)
            .prop_map(|a| (false, a)),
        proptest::collection::vec("[a-zA-Z0-9]{1,10}", 1..5)
            .prop_map(|w| (true, w.into_iter().map(String::into_bytes).collect())),
    ]
}

fn encode(cmds: &[(bool, Args)]) -> Vec<u8> {
    let mut wire = Vec::new();
    for (inline, args) in cmds {
        if *inline {
            let words: Vec<&[u8]> = args.iter().map(Vec::as_slice).collect();
            wire.extend(words.join(&b' '));
            wire.extend_from_slice(b"\r\n");
        } else {
            wire.extend(encode_command(args));
        }
    }
    wire
}

/// A reply a server may send (simple strings without line breaks, as `encode` makes them).
fn reply() -> impl Strategy<Value = Reply> {
    let leaf = prop_oneof![
        "[ -~]{0,20}".prop_map(Reply::Simple),
        "[ -~]{0,20}".prop_map(Reply::Error),
        any::<i64>().prop_map(Reply::Integer),
        proptest::collection::vec(any::<u8>(), 0..100).prop_map(Reply::bulk),
        Just(Reply::Nil),
    ];
    leaf.prop_recursive(2, 16, 4, |inner| {
        proptest::collection::vec(inner, 0..4).prop_map(Reply::Array)
    })
}

proptest! {
    #![proptest_config(config())]

    #[test]
    fn resp_random_bytes_never_panic_and_stay_bounded(
        bytes in proptest::collection::vec(any::<u8>(), 0..4096),
        cuts in proptest::collection::vec(any::<usize>(), 0..16),
    ) {
        run_resp(&split(&bytes, &cuts));
    }

    #[test]
    fn resp_plausible_headers_never_panic_and_stay_bounded(
        parts in proptest::collection::vec(
            prop_oneof![
                (0i64..2_000_000).prop_map(|n| format!("*{n}\r\n")),
                (-2i64..600_000_000).prop_map(|n| format!("${n}\r\n")),
                "[a-z]{0,8}\r\n",
                Just("\r\n".to_string()),
            ],
            1..12),
        cuts in proptest::collection::vec(any::<usize>(), 0..16),
    ) {
        let wire: Vec<u8> = parts.concat().into_bytes();
        run_resp(&split(&wire, &cuts));
    }

    #[test]
    fn resp_pipelines_round_trip(
        cmds in proptest::collection::vec(command(), 0..20),
        cuts in proptest::collection::vec(any::<usize>(), 0..24),
    ) {
        let wire = encode(&cmds);
        let (got, failed) = run_resp(&split(&wire, &cuts));
        prop_assert!(!failed);
        let want: Vec<Args> = cmds.into_iter().map(|(_, a)| a).collect();
        prop_assert_eq!(got, want);
    }

    #[test]
    fn resp_mutated_pipelines_never_panic_and_stay_bounded(
        cmds in proptest::collection::vec(command(), 1..10),
        edits in proptest::collection::vec((any::<u8>(), any::<usize>(), any::<u8>()), 1..6),
        cuts in proptest::collection::vec(any::<usize>(), 0..16),
    ) {
        let wire = mutate(encode(&cmds), &edits);
        run_resp(&split(&wire, &cuts));
    }

    #[test]
    fn resp_replies_round_trip(replies in proptest::collection::vec(reply(), 1..8)) {
        let mut wire = Vec::new();
        for r in &replies {
            r.encode(&mut wire);
        }
        let mut pos = 0;
        for r in &replies {
            let (got, used) = parse_reply(&wire[pos..]).unwrap().expect("a whole reply");
            prop_assert_eq!(&got, r);
            pos += used;
        }
        prop_assert_eq!(pos, wire.len());
    }
}
