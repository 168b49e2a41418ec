//! Names the item a compiler error says is missing: `tokio::task::LocalSet`,
//! `TcpStream::peek`, `impl UnwindSafe for JoinHandle`.
//!
//! ```text
//! let item = missing::name(&error, &source_text, &span_bytes);
//! ```
//!
//! The name is read from the error's message (whose wording is stable for the errors that say
//! something is missing) and, for paths, from the source text around the span, which says
//! `tokio::task::spawn_local` where the message only says "in module `task`". Errors this
//! module does not recognise are named by their code and message, so nothing is lost, only
//! grouped less well.

use std::ops::Range;

/// tokio's top-level modules: a path starting with one of them is tokio's.
const TOKIO_MODULES: &[&str] = &[
    "fs", "io", "net", "process", "runtime", "signal", "sync", "task", "time",
];

/// What the compiler said: the error's code, message, primary label and notes.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Said<'a> {
    pub(crate) code: Option<&'a str>,
    pub(crate) message: &'a str,
    pub(crate) label: Option<&'a str>,
    pub(crate) notes: &'a [String],
}

/// The missing item an error names. `text` is the file the span is in, `at` the span.
pub(crate) fn name(said: &Said<'_>, text: &str, at: &Range<usize>) -> String {
    let message = said.message;
    let ticks = backticked(message);
    let first = ticks.first().map(String::as_str).unwrap_or_default();
    let code = said.code.unwrap_or_default();
    let path_here = path_ending_at(text, at);
    let qualify_from_source = |name: &str, module: Option<&str>| {
        if path_here.ends_with(name) && path_here.contains("::") {
            return qualify(&path_here);
        }
        match module {
            Some(m) => qualify(&format!("{m}::{name}")),
            None => qualify(name),
        }
    };
    match code {
        "E0432" => qualify(first),
        "E0433" | "E0412" | "E0425" | "E0422" | "E0423" | "E0531" | "E0532" | "E0405" => {
            // "could not find `X` in `Y`", "cannot find type `X` in module `Y`",
            // "use of undeclared type `X`", "cannot find value `x` in this scope".
            let module = if message.contains(" in module `")
                || message.contains(" in crate `")
                || message.contains("could not find")
            {
                ticks.get(1).map(String::as_str)
            } else {
                None
            };
            qualify_from_source(first, module)
        }
        "E0599" => {
            // "no method named `m` found for struct `T` in the current scope"
            match ticks.get(1).map(String::as_str) {
                Some("()") => format!("`{first}` on `()` (tokio returns a value there)"),
                Some(ty) => format!("{}::{first}", type_name(ty)),
                None => first.to_string(),
            }
        }
        "E0609" | "E0560" => match ticks.get(1) {
            // "no field `f` on type `T`", "struct `T` has no field named `f`"
            Some(other) if code == "E0609" => format!("{}.{first}", type_name(other)),
            Some(other) => format!("{}.{other}", type_name(first)),
            None => first.to_string(),
        },
        "E0277" => trait_bound(message, &ticks, said.notes),
        "E0061" | "E0107" => {
            let callee = if path_here.is_empty() {
                first.to_string()
            } else {
                qualify(&path_here)
            };
            format!(
                "{callee}: {}",
                message.split(" but ").next().unwrap_or(message)
            )
        }
        "E0308" => {
            let what = said.label.unwrap_or("mismatched types");
            match callee_around(text, at) {
                Some(callee) => format!("{callee}(..) argument: {what}"),
                None if !path_here.is_empty() => format!("{}: {what}", qualify(&path_here)),
                None => format!("mismatched types: {what}"),
            }
        }
        "E0603" | "E0624" => format!("{} (private)", qualify_from_source(first, None)),
        _ if message.starts_with("cannot find macro") => {
            let module = message.contains(" in crate `") || message.contains(" in module `");
            let module = ticks.get(1).filter(|_| module).map(String::as_str);
            format!("{}!", qualify_from_source(first, module))
        }
        _ if message.starts_with("cannot find attribute") => format!("#[{first}]"),
        // No code: a `compile_error!`, here from the `#[tokio::test]`/`#[tokio::main]`
        // attribute (spinpark's), which points at the argument it refuses.
        "" => match attribute_line(text, at) {
            Some(attr) => {
                let line = first_line(message);
                format!("{attr}: {}", line.split("; ").next().unwrap_or(&line))
            }
            None => first_line(message),
        },
        _ => format!("{code}: {}", first_line(message)),
    }
}

/// The attribute on the line of `at`, when that line is one (`#[tokio::test(flavor = "local")]`).
fn attribute_line(text: &str, at: &Range<usize>) -> Option<String> {
    let start = text.get(..at.start)?.rfind('\n').map_or(0, |i| i + 1);
    let end = text
        .get(at.start..)?
        .find('\n')
        .map_or(text.len(), |i| at.start + i);
    let line = text[start..end].trim();
    line.starts_with("#[").then(|| line.to_string())
}

/// The function or method whose call's arguments hold `at`: `.poll_recv` for a span on
/// `&mut buf` in `sock.poll_recv(cx, &mut buf)`, `spawn` in `tokio::spawn(x)`.
fn callee_around(text: &str, at: &Range<usize>) -> Option<String> {
    let before = text.get(..at.start)?;
    let mut depth = 0usize;
    for (i, c) in before.char_indices().rev() {
        match c {
            ')' | ']' => depth += 1,
            '(' | '[' if depth > 0 => depth -= 1,
            '(' => {
                let name = path_ending_at(before, &(i..i));
                let dot = before[..i - name.len()].ends_with('.');
                return (!name.is_empty()).then(|| {
                    if dot {
                        format!(".{name}")
                    } else {
                        qualify(&name)
                    }
                });
            }
            ';' | '{' | '}' if depth == 0 => return None,
            _ => {}
        }
    }
    None
}

/// The words of `message` between backticks.
pub(crate) fn backticked(message: &str) -> Vec<String> {
    message
        .split('`')
        .enumerate()
        .filter(|(i, _)| i % 2 == 1)
        .map(|(_, s)| s.to_string())
        .collect()
}

/// `Foo` for `&mut a::b::Foo<T>`, `&Foo`, `Foo`.
pub(crate) fn type_name(ty: &str) -> String {
    let ty = ty.trim_start_matches('&').trim_start_matches("mut ").trim();
    let ty = ty.trim_start_matches('(').trim_start_matches("dyn ");
    let ty = ty.split(" + ").next().unwrap_or(ty).trim_end_matches(')');
    let base = ty.split('<').next().unwrap_or(ty);
    base.rsplit("::").next().unwrap_or(base).to_string()
}

/// `tokio::task::LocalSet` for `task::LocalSet`, `::tokio::task::LocalSet` and itself.
pub(crate) fn qualify(path: &str) -> String {
    let path = path.trim_start_matches("::");
    let first = path.split("::").next().unwrap_or_default();
    if TOKIO_MODULES.contains(&first) {
        format!("tokio::{path}")
    } else {
        path.to_string()
    }
}

/// The path expression that ends where the span ends: `tokio::task::spawn_local` for a span on
/// `spawn_local` in `tokio::task::spawn_local(f)`. Empty when the span is not a path's end.
pub(crate) fn path_ending_at(text: &str, at: &Range<usize>) -> String {
    let Some(prefix) = text.get(..at.end.min(text.len())) else {
        return String::new();
    };
    let is_path = |c: char| c.is_alphanumeric() || c == '_' || c == ':';
    let start = prefix
        .char_indices()
        .rev()
        .take_while(|&(_, c)| is_path(c))
        .last()
        .map_or(prefix.len(), |(i, _)| i);
    let path = &prefix[start..];
    // Generic arguments (`Foo::<T>::new`) are outside this simple reading: keep what follows.
    path.trim_start_matches(':').to_string()
}

/// `impl Trait for Type` from the trait-bound errors' wordings. For an auto trait the type
/// the message names is often deep inside the one the test uses; the notes say which
/// (`within `Runtime`, the trait `RefUnwindSafe` is not implemented for ...`, or the last
/// `required because it appears within the type `Runtime``).
fn trait_bound(message: &str, ticks: &[String], notes: &[String]) -> String {
    let first = ticks.first().map(String::as_str).unwrap_or_default();
    let pair = |ty: &str, tr: &str| format!("impl {} for {}", type_name(tr), type_name(ty));
    let outer = || {
        let within = notes.iter().find_map(|n| {
            let rest = n.strip_prefix("within `")?;
            rest.split('`').next().map(str::to_string)
        });
        within.or_else(|| {
            notes
                .iter()
                .rev()
                .filter_map(|n| n.strip_prefix("required because it appears within the type `"))
                .filter_map(|rest| rest.split('`').next())
                .find(|ty| {
                    !["std::", "alloc::", "core::"]
                        .iter()
                        .any(|p| ty.starts_with(p))
                })
                .map(str::to_string)
        })
    };
    if message.starts_with("the trait bound") {
        // "the trait bound `X: Y` is not satisfied"
        if let Some((ty, tr)) = first.split_once(": ") {
            return pair(ty, tr);
        }
    }
    let auto = |tr: &str| pair(&outer().unwrap_or_else(|| first.to_string()), tr);
    if message.contains("cannot be sent between threads safely") {
        return auto("Send");
    }
    if message.contains("cannot be shared between threads safely") {
        return auto("Sync");
    }
    if message.contains("interior mutability") {
        return auto("RefUnwindSafe");
    }
    if message.contains("unwind boundary") {
        return auto("UnwindSafe");
    }
    if message.contains("is not a future") {
        return pair(first, "Future");
    }
    if message.contains("doesn't implement") {
        if let Some(tr) = ticks.get(1) {
            return pair(first, tr);
        }
    }
    format!("E0277: {}", first_line(message))
}

fn first_line(message: &str) -> String {
    message.lines().next().unwrap_or_default().to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(text: &str, needle: &str) -> Range<usize> {
        let start = text.find(needle).unwrap();
        start..start + needle.len()
    }

    fn said<'a>(code: Option<&'a str>, message: &'a str) -> Said<'a> {
        Said {
            code,
            message,
            label: None,
            notes: &[],
        }
    }

    fn n(code: Option<&str>, message: &str, text: &str, span: &Range<usize>) -> String {
        name(&said(code, message), text, span)
    }

    #[test]
    fn unresolved_paths_are_qualified_from_the_source() {
        let text = "fn t() { tokio::task::spawn_local(async {}); task::LocalSet::new(); }";
        let spawn_local = n(
            Some("E0425"),
            "cannot find function `spawn_local` in module `tokio::task`",
            text,
            &at(text, "spawn_local"),
        );
        assert_eq!(spawn_local, "tokio::task::spawn_local");
        let local_set = n(
            Some("E0433"),
            "failed to resolve: could not find `LocalSet` in `task`",
            text,
            &at(text, "LocalSet"),
        );
        assert_eq!(local_set, "tokio::task::LocalSet");
        let import = n(
            Some("E0432"),
            "unresolved import `tokio::fs`",
            text,
            &(0..0),
        );
        assert_eq!(import, "tokio::fs");
        let scope = n(
            Some("E0425"),
            "cannot find function `rt` in this scope",
            "rt()",
            &(0..2),
        );
        assert_eq!(scope, "rt");
        assert_eq!(
            n(
                None,
                "cannot find macro `task_local` in crate `tokio`",
                "",
                &(0..0)
            ),
            "tokio::task_local!"
        );
    }

    #[test]
    fn methods_fields_and_traits() {
        let e = |code, msg: &str| n(Some(code), msg, "", &(0..0));
        assert_eq!(
            e(
                "E0599",
                "no method named `peek` found for struct `TcpStream` in the current scope"
            ),
            "TcpStream::peek"
        );
        assert_eq!(
            e(
                "E0599",
                "no function or associated item named `new_local` found for struct `spinpark_executor::Builder` in the current scope"
            ),
            "Builder::new_local"
        );
        assert_eq!(
            e(
                "E0599",
                "no method named `id` found for reference `&JoinHandle<()>` in the current scope"
            ),
            "JoinHandle::id"
        );
        assert_eq!(
            e(
                "E0599",
                "no method named `abort` found for unit type `()` in the current scope"
            ),
            "`abort` on `()` (tokio returns a value there)"
        );
        assert_eq!(
            e(
                "E0277",
                "the trait bound `JoinHandle<()>: UnwindSafe` is not satisfied"
            ),
            "impl UnwindSafe for JoinHandle"
        );
        assert_eq!(
            e(
                "E0277",
                "`spinpark::Runtime` cannot be shared between threads safely"
            ),
            "impl Sync for Runtime"
        );
        assert_eq!(
            e("E0277", "`Foo` doesn't implement `std::fmt::Debug`"),
            "impl Debug for Foo"
        );
        assert_eq!(e("E0609", "no field `x` on type `Bar`"), "Bar.x");
        assert_eq!(e("E0999", "something new\nmore"), "E0999: something new");
    }

    #[test]
    fn auto_traits_name_the_outer_type_from_the_notes() {
        let notes = [
            "required because it appears within the type `alloc::sync::ArcInner<Shared>`"
                .to_string(),
            "required because it appears within the type `Handle`".to_string(),
            "required because it appears within the type `Runtime`".to_string(),
            "required because it's used within this closure".to_string(),
        ];
        let unwind = Said {
            code: Some("E0277"),
            message: "the type `(dyn spinpark_executor::io_driver::Driver + 'static)` may not be safely transferred across an unwind boundary",
            label: None,
            notes: &notes,
        };
        assert_eq!(name(&unwind, "", &(0..0)), "impl UnwindSafe for Runtime");
        let within = [
            "within `Runtime`, the trait `RefUnwindSafe` is not implemented for `UnsafeCell<u8>`"
                .to_string(),
        ];
        let cell = Said {
            message: "the type `UnsafeCell<u8>` may contain interior mutability and a reference may not be safely transferable across a catch_unwind boundary",
            notes: &within,
            ..unwind
        };
        assert_eq!(name(&cell, "", &(0..0)), "impl RefUnwindSafe for Runtime");
        assert_eq!(type_name("(dyn a::Driver + 'static)"), "Driver");
    }

    #[test]
    fn mismatched_arguments_name_the_call_and_macro_errors_the_attribute() {
        let text = "let n = sock.poll_recv(cx, &mut read);\n";
        let mismatch = Said {
            label: Some("expected `&mut [u8]`, found `&mut ReadBuf<'_>`"),
            ..said(Some("E0308"), "mismatched types")
        };
        assert_eq!(
            name(&mismatch, text, &at(text, "&mut read")),
            ".poll_recv(..) argument: expected `&mut [u8]`, found `&mut ReadBuf<'_>`"
        );
        let text = "fn a() {}\n#[tokio::test(flavor = \"local\")]\nasync fn b() {}\n";
        assert_eq!(
            n(None, "`flavor` is \"current_thread\" or \"multi_thread\", not \"local\"", text, &at(text, "\"local\"")),
            "#[tokio::test(flavor = \"local\")]: `flavor` is \"current_thread\" or \"multi_thread\", not \"local\""
        );
        assert_eq!(
            n(
                None,
                "the main function cannot accept arguments",
                "fn f(self)",
                &(5..9)
            ),
            "the main function cannot accept arguments"
        );
    }

    #[test]
    fn path_before_a_span() {
        let text = "let x = ::tokio::runtime::Builder::new_local(); y";
        assert_eq!(
            path_ending_at(text, &at(text, "new_local")),
            "tokio::runtime::Builder::new_local"
        );
        assert_eq!(path_ending_at(text, &at(text, "; ")), "");
        assert_eq!(qualify("runtime::Builder"), "tokio::runtime::Builder");
        assert_eq!(qualify("std::thread"), "std::thread");
        assert_eq!(callee_around("f(a, g(b), c)", &(11..12)), Some("f".into()));
        assert_eq!(callee_around("x; y", &(3..4)), None);
    }
}
