//! Which cut accounts for a test that tokio's build has and spinpark's does not.
//!
//! ```text
//! let items = charge("current_thread_scheduler::spawn_two", &removed);  // the cut's items
//! ```
//!
//! The harness knows a file's test instances from building it against the real tokio, and the
//! compiled ones from the shim build; the difference was cut. A cut test function accounts for
//! the instances with its name under its module path, where a macro body's place in the path
//! (`rt_test! { .. }`, expanded into one module per runtime flavour) matches any module; a cut
//! container or macro call accounts for the instances of the tests it held.

use std::collections::BTreeSet;

use crate::prune::Removed;
use crate::source::{Kind, Seg};

/// The items of the cuts that account for `instance`, or `None` if no cut does.
pub(crate) fn charge(instance: &str, removed: &[Removed]) -> Option<BTreeSet<String>> {
    let segments: Vec<&str> = instance.split("::").collect();
    let (name, module) = segments.split_last()?;
    let fits = |r: &&Removed| {
        r.test_names.iter().any(|t| t == name) && {
            // A cut test sits exactly at its container; a cut container holds it deeper.
            let exact = r.kind == Kind::Test;
            matches(&r.container, module, exact)
        }
    };
    let mut items: BTreeSet<String> = removed
        .iter()
        .filter(fits)
        .flat_map(|r| r.items.clone())
        .collect();
    if items.is_empty() {
        // Module paths that the source does not show (a macro defining modules itself):
        // fall back on the name alone.
        items = removed
            .iter()
            .filter(|r| r.test_names.iter().any(|t| t == name))
            .flat_map(|r| r.items.clone())
            .collect();
    }
    (!items.is_empty()).then_some(items)
}

/// Whether a module path fits a container pattern; `Any` stands for one or more modules.
/// Not `exact`: the module may go on below the pattern.
fn matches(pattern: &[Seg], module: &[&str], exact: bool) -> bool {
    match pattern.split_first() {
        None => !exact || module.is_empty(),
        Some((Seg::Name(n), rest)) => {
            module.first() == Some(&n.as_str()) && matches(rest, &module[1..], exact)
        }
        Some((Seg::Any, rest)) => (1..=module.len()).any(|k| matches(rest, &module[k..], exact)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn removed(kind: Kind, container: Vec<Seg>, tests: &[&str], item: &str) -> Removed {
        Removed {
            kind,
            name: tests.first().map_or("x", |t| t).to_string(),
            container,
            test_names: tests.iter().map(|t| t.to_string()).collect(),
            items: [item.to_string()].into(),
        }
    }

    #[test]
    fn charges_tests_by_name_and_module() {
        let cuts = vec![
            removed(Kind::Test, vec![Seg::Any], &["spawn_two"], "A"),
            removed(Kind::Test, vec![], &["top"], "B"),
            removed(Kind::Test, vec![Seg::Name("m".into())], &["top"], "C"),
            removed(Kind::MacroCall, vec![], &["ip_str", "host_str"], "D"),
        ];
        let one = |s: &str| charge(s, &cuts).map(|i| i.into_iter().collect::<Vec<_>>());
        assert_eq!(
            one("current_thread_scheduler::spawn_two"),
            Some(vec!["A".to_string()])
        );
        assert_eq!(one("top"), Some(vec!["B".to_string()]));
        assert_eq!(one("m::top"), Some(vec!["C".to_string()]));
        assert_eq!(one("host_str"), Some(vec!["D".to_string()]));
        assert_eq!(one("unrelated"), None);
        // Only the name fits: charged anyway.
        assert_eq!(one("x::y::top").map(|v| v.len()), Some(2));
    }

    #[test]
    fn container_patterns() {
        let any = [Seg::Any];
        assert!(matches(&any, &["a"], true));
        assert!(matches(&any, &["a", "b"], true));
        assert!(!matches(&any, &[], true));
        assert!(matches(&[], &["a"], false));
        assert!(!matches(&[], &["a"], true));
        let named = [Seg::Name("m".into()), Seg::Any];
        assert!(matches(&named, &["m", "x"], true));
        assert!(!matches(&named, &["n", "x"], true));
    }
}
