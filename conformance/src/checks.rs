//! Compile-time checks made countable: tokio's `async_send_sync.rs` has no test function,
//! only one `assert_value!(Type: Send & Sync & Unpin)` or `async_assert_fn!(path(args): ...)`
//! per type or function, each a `const _` item that compiles only if the auto traits are
//! exactly tokio's. The harness wraps each such call in a test function of its own, in the
//! generated copy (suite and reference alike), so that a check spinpark fails is cut and
//! counted as one instance, and one that compiles is a test that passes.
//!
//! ```text
//! async_assert_fn!(tokio::io::stdout(): Send & Sync & Unpin);
//! // becomes
//! #[test] fn fn_io_stdout() { async_assert_fn!(tokio::io::stdout(): Send & Sync & Unpin); }
//! ```
//!
//! A test is named after the checked item: `type_` or `fn_`, then the identifiers before the
//! traits (without the leading `tokio`) in snake case, `_2` and on for a name already taken in
//! the same module.

use std::collections::BTreeSet;
use std::ops::Range;

use proc_macro2::{LineColumn, Spacing, TokenStream, TokenTree};
use syn::spanned::Spanned;
use syn::Item;

use crate::source::parse_items;

/// The files whose checks become tests.
pub(crate) const FILES: &[&str] = &["async_send_sync"];

/// The check macros, and the prefix of the tests made of them.
const MACROS: &[(&str, &str)] = &[("assert_value", "type"), ("async_assert_fn", "fn")];

/// `text` with every check call wrapped in a test function (see the module docs); `None` if
/// the file does not parse.
pub(crate) fn wrap(text: &str) -> Option<String> {
    let file = syn::parse_file(text).ok()?;
    let lines: Vec<usize> = std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect();
    let offset = |at: LineColumn| {
        let start = lines[at.line - 1];
        text[start..]
            .char_indices()
            .nth(at.column)
            .map_or(text.len(), |(i, _)| start + i)
    };
    let mut edits = Vec::new();
    collect(&file.items, &mut BTreeSet::new(), &mut edits, &offset);
    edits.sort_by_key(|(range, _)| range.start);
    let mut out = String::with_capacity(text.len() + edits.len() * 40);
    let mut at = 0;
    for (range, name) in edits {
        out.push_str(&text[at..range.start]);
        out.push_str(&format!(
            "#[test]\nfn {name}() {{\n{}\n}}",
            &text[range.start..range.end]
        ));
        at = range.end;
    }
    out.push_str(&text[at..]);
    Some(out)
}

/// Finds the check calls among `items` (and in inline modules and macro bodies of items),
/// with the test name each gets; `taken` holds the names used in the current module.
fn collect(
    items: &[Item],
    taken: &mut BTreeSet<String>,
    out: &mut Vec<(Range<usize>, String)>,
    offset: &dyn Fn(LineColumn) -> usize,
) {
    for item in items {
        match item {
            Item::Mod(m) => {
                if let Some((_, inner)) = &m.content {
                    collect(inner, &mut BTreeSet::new(), out, offset);
                }
            }
            Item::Macro(m) if m.ident.is_none() => {
                let name = m.mac.path.segments.last().map(|s| s.ident.to_string());
                let prefix = MACROS
                    .iter()
                    .find(|(mac, _)| Some(*mac) == name.as_deref())
                    .map(|(_, prefix)| *prefix);
                if let Some(prefix) = prefix {
                    let base = format!("{prefix}_{}", subject(m.mac.tokens.clone()));
                    let mut name = base.clone();
                    let mut n = 1;
                    while !taken.insert(name.clone()) {
                        n += 1;
                        name = format!("{base}_{n}");
                    }
                    let span = item.span();
                    out.push((offset(span.start())..offset(span.end()), name));
                } else if let Ok(inner) = parse_items(m.mac.tokens.clone()) {
                    // A body of items (`cfg_not_wasi! { ... }`) expands into this module.
                    collect(&inner, taken, out, offset);
                }
            }
            _ => {}
        }
    }
}

/// The snake-case identifiers of what a check is about: its tokens before the `:` that
/// starts the traits, without the leading `tokio`.
fn subject(tokens: TokenStream) -> String {
    let mut before = Vec::new();
    let mut colon_joint = false;
    for tree in tokens {
        if let TokenTree::Punct(p) = &tree {
            if p.as_char() == ':' {
                if p.spacing() == Spacing::Alone && !colon_joint {
                    break;
                }
                colon_joint = p.spacing() == Spacing::Joint;
                continue;
            }
        }
        colon_joint = false;
        before.push(tree);
    }
    let mut idents = Vec::new();
    for tree in before {
        push_idents(tree, &mut idents);
    }
    if idents.first().is_some_and(|i| i == "tokio") {
        idents.remove(0);
    }
    idents
        .iter()
        .filter(|i| *i != "_")
        .map(|i| snake(i))
        .collect::<Vec<_>>()
        .join("_")
}

fn push_idents(tree: TokenTree, out: &mut Vec<String>) {
    match tree {
        TokenTree::Ident(i) => out.push(i.to_string()),
        TokenTree::Group(g) => {
            for t in g.stream() {
                push_idents(t, out);
            }
        }
        _ => {}
    }
}

/// `BoxFutureSync` -> `box_future_sync`, `NN` -> `nn`, `read_u8` stays.
fn snake(ident: &str) -> String {
    let chars: Vec<char> = ident.chars().collect();
    let mut out = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if c.is_uppercase() && i > 0 {
            let prev = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            if prev.is_lowercase() || prev.is_ascii_digit() || (prev.is_uppercase() && next_lower) {
                out.push('_');
            }
        }
        out.extend(c.to_lowercase());
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"macro_rules! assert_value { ($t:ty: $($tok:tt)*) => { const _: () = (); }; }
macro_rules! cfg_not_wasi { ($($item:item)*) => { $( $item )* } }
assert_value!(tokio::io::Stdout: Send & Sync & Unpin);
async_assert_fn!(tokio::io::stdout(): Send & Sync & Unpin);
async_assert_fn!(tokio::sync::Mutex<NN>::lock(_): !Send & !Sync & !Unpin);
async_assert_fn!(tokio::sync::Mutex<NN>::lock(_): Send & Sync & !Unpin);
cfg_not_wasi! {
    mod fs {
        use super::*;
        assert_value!(tokio::fs::File: Send & Sync & Unpin);
    }
    async_assert_fn!(tokio::signal::ctrl_c(): Send & Sync & !Unpin);
}
const _: fn() = || {};
"#;

    #[test]
    fn wraps_each_check_in_a_named_test() {
        let out = wrap(FILE).unwrap();
        for name in [
            "fn type_io_stdout()",
            "fn fn_io_stdout()",
            "fn fn_sync_mutex_nn_lock()",
            "fn fn_sync_mutex_nn_lock_2()",
            "fn type_fs_file()",
            "fn fn_signal_ctrl_c()",
        ] {
            assert!(out.contains(name), "{name} missing in\n{out}");
        }
        assert_eq!(out.matches("#[test]").count(), 6);
        // The macro definitions and other items are left as they were.
        assert!(out.starts_with("macro_rules! assert_value"));
        assert!(out.contains("\nconst _: fn() = || {};"));
        assert!(syn::parse_file(&out).is_ok());
    }

    #[test]
    fn snake_case() {
        assert_eq!(snake("BoxFutureSync"), "box_future_sync");
        assert_eq!(snake("NN"), "nn");
        assert_eq!(snake("read_u8"), "read_u8");
        assert_eq!(snake("TcpStream"), "tcp_stream");
        assert_eq!(snake("AsyncFDReady"), "async_fd_ready");
    }
}
