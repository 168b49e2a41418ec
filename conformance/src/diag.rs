//! Cargo's `--message-format=json` output: the compiler's errors, each with where it points,
//! and the test executables that were built.
//!
//! ```text
//! let out = Messages::parse(&stdout);
//! for error in &out.errors { error.target; error.code; error.locations; }
//! out.executables["rt_common"];
//! ```
//!
//! An error can point into a macro: then its span is in the macro's definition, and each
//! `expansion` step leads one call site further out. [`Error::locations`] keeps the whole
//! chain for every primary span, innermost first, so the caller can pick the first place that
//! is in a test file and not inside a `macro_rules!` definition.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::PathBuf;

use serde_json::Value;

/// A place in a source file.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Location {
    /// As the compiler names it: relative to the workspace root, or absolute.
    pub(crate) file: PathBuf,
    /// Byte range in the file.
    pub(crate) bytes: Range<usize>,
    /// The span's label, if any (`no `LocalSet` in `task``).
    pub(crate) label: Option<String>,
}

/// One compiler error.
#[derive(Debug, Clone)]
pub(crate) struct Error {
    /// The cargo target it belongs to (a test file's name).
    pub(crate) target: String,
    /// `E0432`; `None` for errors without a code (`compile_error!`, "cannot find macro").
    pub(crate) code: Option<String>,
    pub(crate) message: String,
    /// For every primary span: its location, then each macro call site outwards.
    pub(crate) locations: Vec<Vec<Location>>,
    /// The messages of its notes and helps (`within `Runtime`, the trait ... is not
    /// implemented for ...`).
    pub(crate) notes: Vec<String>,
    /// The compiler's rendering, for the report when nothing better is known.
    pub(crate) rendered: String,
}

/// What one cargo build printed.
#[derive(Debug, Default)]
pub(crate) struct Messages {
    pub(crate) errors: Vec<Error>,
    /// Test target name -> its executable.
    pub(crate) executables: BTreeMap<String, PathBuf>,
    /// Whether cargo said the build succeeded.
    pub(crate) success: bool,
}

impl Messages {
    /// Reads cargo's JSON lines; lines that are not JSON are skipped.
    pub(crate) fn parse(stdout: &str) -> Messages {
        let mut out = Messages::default();
        for line in stdout.lines() {
            let Ok(msg) = serde_json::from_str::<Value>(line) else {
                continue;
            };
            let target = msg["target"]["name"].as_str().unwrap_or_default();
            match msg["reason"].as_str() {
                Some("compiler-message") => {
                    if let Some(error) = error(target, &msg["message"]) {
                        out.errors.push(error);
                    }
                }
                Some("compiler-artifact") => {
                    let is_test = msg["profile"]["test"].as_bool().unwrap_or(false);
                    if let (true, Some(exe)) = (is_test, msg["executable"].as_str()) {
                        out.executables
                            .insert(target.to_string(), PathBuf::from(exe));
                    }
                }
                Some("build-finished") => out.success = msg["success"].as_bool() == Some(true),
                _ => {}
            }
        }
        out
    }
}

fn error(target: &str, msg: &Value) -> Option<Error> {
    if msg["level"].as_str() != Some("error") {
        return None;
    }
    let spans = msg["spans"].as_array()?;
    let locations: Vec<Vec<Location>> = spans
        .iter()
        .filter(|s| s["is_primary"].as_bool() == Some(true))
        .map(chain)
        .collect();
    let notes = msg["children"]
        .as_array()
        .map(|c| {
            c.iter()
                .filter_map(|n| n["message"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Some(Error {
        target: target.to_string(),
        code: msg["code"]["code"].as_str().map(str::to_string),
        message: msg["message"].as_str().unwrap_or_default().to_string(),
        locations,
        notes,
        rendered: msg["rendered"].as_str().unwrap_or_default().to_string(),
    })
}

/// The span, then the call site of the macro it came from, and so on outwards.
fn chain(span: &Value) -> Vec<Location> {
    let mut out = Vec::new();
    let mut at = span;
    while at.is_object() {
        let (Some(file), Some(start), Some(end)) = (
            at["file_name"].as_str(),
            at["byte_start"].as_u64(),
            at["byte_end"].as_u64(),
        ) else {
            break;
        };
        out.push(Location {
            file: PathBuf::from(file),
            bytes: start as usize..end as usize,
            label: at["label"].as_str().map(str::to_string),
        });
        at = &at["expansion"]["span"];
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errors_with_their_macro_chain_and_executables() {
        let stdout = r#"not json
{"reason":"compiler-message","target":{"name":"rt_common","kind":["test"]},"message":{"level":"warning","message":"unused","code":null,"spans":[],"rendered":"w"}}
{"reason":"compiler-message","target":{"name":"rt_common","kind":["test"]},"message":{"level":"error","message":"unresolved import `tokio::task::LocalSet`","code":{"code":"E0432"},"rendered":"error[E0432]","children":[{"message":"a note","spans":[]}],"spans":[{"file_name":"suite/tests/a/a.rs","byte_start":10,"byte_end":18,"is_primary":true,"label":"no `LocalSet` in `task`","expansion":null},{"file_name":"suite/tests/a/a.rs","byte_start":1,"byte_end":2,"is_primary":false,"label":null,"expansion":null}]}}
{"reason":"compiler-message","target":{"name":"tcp","kind":["test"]},"message":{"level":"error","message":"no method named `peek`","code":{"code":"E0599"},"rendered":"r","spans":[{"file_name":"m.rs","byte_start":5,"byte_end":9,"is_primary":true,"label":null,"expansion":{"span":{"file_name":"suite/tests/tcp/tcp.rs","byte_start":100,"byte_end":120,"is_primary":false,"label":null,"expansion":null},"macro_decl_name":"assert_ok!"}}]}}
{"reason":"compiler-artifact","target":{"name":"tcp_echo","kind":["test"]},"profile":{"test":true},"executable":"/t/debug/deps/tcp_echo-abc"}
{"reason":"compiler-artifact","target":{"name":"libc","kind":["lib"]},"profile":{"test":false},"executable":null}
{"reason":"build-finished","success":false}
"#;
        let out = Messages::parse(stdout);
        assert!(!out.success);
        assert_eq!(out.errors.len(), 2);
        let e = &out.errors[0];
        assert_eq!(
            (e.target.as_str(), e.code.as_deref()),
            ("rt_common", Some("E0432"))
        );
        assert_eq!(e.locations.len(), 1, "only primary spans");
        assert_eq!(e.notes, ["a note"]);
        assert_eq!(e.locations[0][0].bytes, 10..18);
        assert_eq!(
            e.locations[0][0].label.as_deref(),
            Some("no `LocalSet` in `task`")
        );
        let chain = &out.errors[1].locations[0];
        assert_eq!(chain.len(), 2);
        assert_eq!(chain[1].file, PathBuf::from("suite/tests/tcp/tcp.rs"));
        assert_eq!(chain[1].bytes, 100..120);
        assert_eq!(out.executables.len(), 1);
        assert_eq!(
            out.executables["tcp_echo"],
            PathBuf::from("/t/debug/deps/tcp_echo-abc")
        );
    }
}
