//! The repository's list of failures that are spinpark's choice (`conformance/choices.toml`),
//! and the floor under the passed count (`conformance/floor`).
//!
//! ```toml
//! [[choice]]
//! test = "rt_common::*::io_driver_called_when_under_load"
//! category = "unspecified-detail"
//! reason = "counts how often the I/O driver is polled, which tokio's docs leave open"
//! ```
//!
//! `test` is `file::test`, with `*` matching any run of characters (one entry for the same test
//! in the three runtime flavours of `rt_common`). Only the categories the project allows exist
//! here; anything else is a bug or a missing item, and the file fails to load.

use std::path::Path;

/// Why a failure is not counted as a bug.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) enum Category {
    /// tokio panics where spinpark returns an error or has nothing to refuse: I/O and timers
    /// are always on, bad `Builder` numbers are refused by `build()`.
    ErrorNotPanic,
    /// tokio's exact panic, error and Debug texts (task ids in messages, tokio's name).
    PanicText,
    /// tokio's coop budget as tokio's own resources consult it.
    CoopBudget,
    /// Readiness or timing details tokio's documentation leaves open.
    UnspecifiedDetail,
    /// The machine the run is on, not spinpark: the test fails on tokio there too (running
    /// as root).
    Environment,
}

impl Category {
    pub(crate) const ALL: [Category; 5] = [
        Category::ErrorNotPanic,
        Category::PanicText,
        Category::CoopBudget,
        Category::UnspecifiedDetail,
        Category::Environment,
    ];

    pub(crate) fn key(self) -> &'static str {
        match self {
            Category::ErrorNotPanic => "error-not-panic",
            Category::PanicText => "panic-text",
            Category::CoopBudget => "coop-budget",
            Category::UnspecifiedDetail => "unspecified-detail",
            Category::Environment => "environment",
        }
    }

    pub(crate) fn meaning(self) -> &'static str {
        match self {
            Category::ErrorNotPanic => {
                "tokio panics where spinpark returns an error or has nothing to refuse \
                 (I/O and timers always on, bad Builder numbers refused by build())"
            }
            Category::PanicText => {
                "tokio's exact panic, error and Debug texts (task ids, tokio's own name)"
            }
            Category::CoopBudget => "tokio's coop budget as tokio's own resources consult it",
            Category::UnspecifiedDetail => {
                "readiness or timing details tokio's documentation leaves open"
            }
            Category::Environment => {
                "the machine the run is on, not spinpark: tokio fails there too (running as root)"
            }
        }
    }
}

/// One entry.
#[derive(Debug, Clone)]
pub(crate) struct Choice {
    pub(crate) test: String,
    pub(crate) category: Category,
    pub(crate) reason: String,
}

/// The whole list.
#[derive(Debug, Default)]
pub(crate) struct Choices {
    pub(crate) entries: Vec<Choice>,
}

impl Choices {
    pub(crate) fn load(path: &Path) -> Result<Choices, String> {
        let text = std::fs::read_to_string(path).map_err(|e| format!("{}: {e}", path.display()))?;
        Choices::parse(&text).map_err(|e| format!("{}: {e}", path.display()))
    }

    pub(crate) fn parse(text: &str) -> Result<Choices, String> {
        let table: toml::Table = text.parse().map_err(|e| format!("{e}"))?;
        let mut entries = Vec::new();
        if let Some(key) = table.keys().find(|k| k.as_str() != "choice") {
            return Err(format!(
                "unknown key `{key}`: entries are [[choice]] tables"
            ));
        }
        let list = match table.get("choice") {
            None => return Ok(Choices::default()),
            Some(toml::Value::Array(list)) => list,
            Some(_) => return Err("`choice` must be an array of tables ([[choice]])".into()),
        };
        for (i, entry) in list.iter().enumerate() {
            let field = |name: &str| {
                entry
                    .get(name)
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
                    .ok_or_else(|| format!("choice #{}: `{name}` (a string) is missing", i + 1))
            };
            let (test, category, reason) = (field("test")?, field("category")?, field("reason")?);
            let category = Category::ALL
                .into_iter()
                .find(|c| c.key() == category)
                .ok_or_else(|| {
                    let known: Vec<_> = Category::ALL.iter().map(|c| c.key()).collect();
                    format!(
                        "choice `{test}`: category `{category}` is not one of {}",
                        known.join(", ")
                    )
                })?;
            if reason.trim().is_empty() {
                return Err(format!("choice `{test}`: the reason is empty"));
            }
            entries.push(Choice {
                test,
                category,
                reason,
            });
        }
        Ok(Choices { entries })
    }

    /// The entry for `file::test`, if any.
    pub(crate) fn find(&self, id: &str) -> Option<&Choice> {
        self.entries.iter().find(|c| glob(&c.test, id))
    }
}

/// Whether `text` matches `pattern`, where `*` matches any run of characters.
pub(crate) fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

/// The floor: the first number in the file, `#` comments and blank lines aside.
pub(crate) fn floor(text: &str) -> Result<usize, String> {
    let line = text
        .lines()
        .map(str::trim)
        .find(|l| !l.is_empty() && !l.starts_with('#'))
        .ok_or("no number in the floor file")?;
    line.parse()
        .map_err(|_| format!("the floor file should hold a number, not `{line}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn loads_entries_and_refuses_other_categories() {
        let ok = r#"
[[choice]]
test = "rt_common::*::spawn_ids"
category = "panic-text"
reason = "task ids"
"#;
        let choices = Choices::parse(ok).unwrap();
        assert_eq!(choices.entries.len(), 1);
        assert_eq!(choices.entries[0].category, Category::PanicText);
        assert!(choices
            .find("rt_common::current_thread_scheduler::spawn_ids")
            .is_some());
        assert!(choices.find("rt_common::spawn_ids_other").is_none());

        let bad = ok.replace("panic-text", "we-like-it");
        let err = Choices::parse(&bad).unwrap_err();
        assert!(
            err.contains("we-like-it") && err.contains("coop-budget"),
            "{err}"
        );
        assert!(Choices::parse("[[choice]]\ntest = \"a\"\ncategory = \"panic-text\"\n").is_err());
        assert!(Choices::parse("other = 1\n").is_err());
        assert!(Choices::parse("").unwrap().entries.is_empty());
    }

    #[test]
    fn globs() {
        assert!(glob("a::*::b", "a::x::y::b"));
        assert!(glob("a*", "a"));
        assert!(glob("*", ""));
        assert!(!glob("a::*::b", "a::b"));
        assert!(glob("a*b*c", "axxbyyc"));
        assert!(!glob("a*b*c", "axxc"));
        assert!(glob("exact", "exact"));
        assert!(!glob("exact", "exact2"));
    }

    #[test]
    fn floors() {
        assert_eq!(floor("# the floor\n\n 640 \n"), Ok(640));
        assert!(floor("# nothing\n").is_err());
        assert!(floor("six hundred").is_err());
    }
}
