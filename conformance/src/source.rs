//! A test file cut into the pieces the harness may remove: tests, helpers, imports, macros.
//!
//! ```text
//! let map = SourceMap::parse(text)?;
//! let unit = map.unit_at(byte_offset_of_an_error);   // the test (or helper) it is in
//! ```
//!
//! A *unit* is an item at the top of the file or of an inline `mod`, or inside the body of an
//! item-position macro call whose body is itself items (`rt_test! { #[test] fn a() {} ... }`,
//! which tokio's tests use to compile one body per runtime flavour). Those containers are
//! units as well, with children, and [`SourceMap::unit_at`] gives the innermost. Positions come
//! from `proc-macro2`'s span locations and are byte offsets into the text, the same as the
//! compiler's diagnostics carry.

use std::ops::Range;

use proc_macro2::{LineColumn, TokenStream, TokenTree};
use quote::ToTokens;
use syn::parse::Parser;
use syn::punctuated::Punctuated;
use syn::spanned::Spanned;
use syn::{Attribute, Item, Meta, Token, UseTree};

/// What a unit is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Kind {
    /// A function with a test attribute (`#[test]`, `#[tokio::test]`, an alias ending in `test`).
    Test,
    /// Any other function.
    Fn,
    /// A `use` item; its leaves can be removed one by one.
    Use,
    /// A `macro_rules!` definition.
    MacroRules,
    /// A macro call in item position whose body is not items (`test_accept! { (a, ..), }`).
    MacroCall,
    /// A macro call whose body is items: a container.
    MacroBody,
    /// An inline module: a container.
    Mod,
    /// Anything else: types, impls, constants, statics.
    Other,
}

/// One segment of the module path a unit lives under.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Seg {
    /// `mod name`.
    Name(String),
    /// The modules a macro body is expanded into, which only the expansion knows.
    Any,
}

/// One imported name of a `use` item.
#[derive(Debug, Clone)]
pub(crate) struct UseLeaf {
    /// The name it brings into scope (`LocalSet`, or the `as` name; `*` for a glob).
    pub(crate) name: String,
    /// The full path it imports, `tokio::task::LocalSet`.
    pub(crate) path: String,
    /// The byte ranges of every path segment leading to it, itself included.
    pub(crate) segments: Vec<Range<usize>>,
}

/// A removable piece of a file.
#[derive(Debug, Clone)]
pub(crate) struct Unit {
    pub(crate) kind: Kind,
    /// Its name: a function's, a type's, a module's, a macro's (`name!`); `use` for imports.
    pub(crate) name: String,
    /// Byte range in the text, outer attributes and doc comments included.
    pub(crate) range: Range<usize>,
    /// The module path of the container it is in.
    pub(crate) container: Vec<Seg>,
    /// For containers and macro calls: the names of the tests they may generate (test function
    /// names inside a body; every identifier in a macro call's tokens).
    pub(crate) test_names: Vec<String>,
    /// For containers: their units.
    pub(crate) children: Vec<Unit>,
    /// For macro calls (with a body of items or not): the names of the items they declare (`static KEY` in
    /// `task_local! { static KEY: u32; }`), which later code may use.
    pub(crate) declares: Vec<String>,
    /// For `use` items: the leaves, and the item itself, to print it again without some.
    pub(crate) leaves: Vec<UseLeaf>,
    use_item: Option<syn::ItemUse>,
}

/// The units of one file.
#[derive(Debug)]
pub(crate) struct SourceMap {
    pub(crate) units: Vec<Unit>,
}

/// Line starts of a text, to turn a span's line and column (in chars) into a byte offset.
struct Lines<'a> {
    text: &'a str,
    starts: Vec<usize>,
}

impl<'a> Lines<'a> {
    fn new(text: &'a str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.match_indices('\n').map(|(i, _)| i + 1));
        Lines { text, starts }
    }

    fn offset(&self, at: LineColumn) -> usize {
        let Some(&start) = self.starts.get(at.line.saturating_sub(1)) else {
            return self.text.len();
        };
        let line = &self.text[start..];
        let within = line
            .char_indices()
            .nth(at.column)
            .map_or(line.len(), |(i, _)| i);
        start + within
    }

    fn range(&self, span: proc_macro2::Span) -> Range<usize> {
        self.offset(span.start())..self.offset(span.end())
    }
}

impl SourceMap {
    /// Parses a Rust file into its units.
    pub(crate) fn parse(text: &str) -> syn::Result<SourceMap> {
        let file = syn::parse_file(text)?;
        let lines = Lines::new(text);
        let units = units(&file.items, &[], &lines);
        Ok(SourceMap { units })
    }

    /// The innermost unit whose range holds `offset`, with the chain of containers above it
    /// (outermost first).
    pub(crate) fn unit_at(&self, offset: usize) -> Option<Vec<&Unit>> {
        let mut chain = Vec::new();
        let mut level = &self.units;
        while let Some(unit) = level.iter().find(|u| u.range.contains(&offset)) {
            chain.push(unit);
            level = &unit.children;
        }
        (!chain.is_empty()).then_some(chain)
    }
}

fn units(items: &[Item], container: &[Seg], lines: &Lines<'_>) -> Vec<Unit> {
    items
        .iter()
        .map(|item| unit(item, container, lines))
        .collect()
}

fn unit(item: &Item, container: &[Seg], lines: &Lines<'_>) -> Unit {
    let mut unit = Unit {
        kind: Kind::Other,
        name: String::new(),
        range: lines.range(item.span()),
        container: container.to_vec(),
        test_names: Vec::new(),
        children: Vec::new(),
        declares: Vec::new(),
        leaves: Vec::new(),
        use_item: None,
    };
    match item {
        Item::Fn(f) => {
            unit.kind = if f.attrs.iter().any(is_test_attr) {
                Kind::Test
            } else {
                Kind::Fn
            };
            unit.name = f.sig.ident.to_string();
        }
        Item::Use(u) => {
            unit.kind = Kind::Use;
            unit.name = "use".into();
            let mut prefix = Vec::new();
            let mut segments = Vec::new();
            leaves(&u.tree, &mut prefix, &mut segments, lines, &mut unit.leaves);
            unit.use_item = Some(u.clone());
        }
        Item::Mod(m) => {
            unit.name = m.ident.to_string();
            if let Some((_, items)) = &m.content {
                unit.kind = Kind::Mod;
                let mut inner = container.to_vec();
                inner.push(Seg::Name(unit.name.clone()));
                unit.children = units(items, &inner, lines);
                unit.test_names = test_names(&unit.children);
            }
        }
        Item::Macro(m) => {
            let name = m.mac.path.segments.last().map(|s| s.ident.to_string());
            let name = name.unwrap_or_default();
            if let Some(ident) = &m.ident {
                unit.kind = Kind::MacroRules;
                unit.name = format!("{ident}!");
            } else if let Ok(items) = parse_items(m.mac.tokens.clone()) {
                unit.kind = Kind::MacroBody;
                unit.name = format!("{name}!");
                let mut all = Vec::new();
                idents(m.mac.tokens.clone(), &mut all);
                unit.declares = declared(&all);
                let mut inner = container.to_vec();
                inner.push(Seg::Any);
                unit.children = units(&items, &inner, lines);
                unit.test_names = test_names(&unit.children);
            } else {
                unit.kind = Kind::MacroCall;
                unit.name = format!("{name}!");
                idents(m.mac.tokens.clone(), &mut unit.test_names);
                unit.declares = declared(&unit.test_names);
            }
        }
        Item::Struct(s) => unit.name = s.ident.to_string(),
        Item::Enum(e) => unit.name = e.ident.to_string(),
        Item::Union(u) => unit.name = u.ident.to_string(),
        Item::Type(t) => unit.name = t.ident.to_string(),
        Item::Trait(t) => unit.name = t.ident.to_string(),
        Item::Const(c) => unit.name = c.ident.to_string(),
        Item::Static(s) => unit.name = s.ident.to_string(),
        Item::Impl(i) => unit.name = type_name(&i.self_ty),
        _ => unit.name = "item".into(),
    }
    unit
}

/// The items of `tokens` (a module's body, or a macro's that expands to items).
pub(crate) fn parse_items(tokens: TokenStream) -> syn::Result<Vec<Item>> {
    let parser = |input: syn::parse::ParseStream<'_>| {
        let mut items = Vec::new();
        while !input.is_empty() {
            items.push(input.parse()?);
        }
        Ok(items)
    };
    parser.parse2(tokens)
}

/// `#[test]`, `#[tokio::test]`, `#[tokio::test(..)]`, `#[std::prelude::v1::test]`, aliases
/// such as `#[maybe_tokio_test]`, and any of these inside `#[cfg_attr(condition, ..)]`.
pub(crate) fn is_test_attr(attr: &Attribute) -> bool {
    if attr.path().is_ident("cfg_attr") {
        let metas = attr.parse_args_with(Punctuated::<Meta, Token![,]>::parse_terminated);
        return metas.is_ok_and(|m| m.iter().skip(1).any(|m| is_test_path(m.path())));
    }
    is_test_path(attr.path())
}

fn is_test_path(path: &syn::Path) -> bool {
    path.segments.last().is_some_and(|s| {
        let name = s.ident.to_string();
        name == "test" || name.ends_with("_test")
    })
}

fn test_names(children: &[Unit]) -> Vec<String> {
    let mut names = Vec::new();
    for child in children {
        match child.kind {
            Kind::Test => names.push(child.name.clone()),
            _ => names.extend(child.test_names.iter().cloned()),
        }
    }
    names
}

fn idents(tokens: TokenStream, out: &mut Vec<String>) {
    for tree in tokens {
        match tree {
            TokenTree::Ident(i) => out.push(i.to_string()),
            TokenTree::Group(g) => idents(g.stream(), out),
            _ => {}
        }
    }
}

/// The identifiers that follow an item keyword (`static`, `fn`, `struct`, ...) in a macro
/// call's tokens.
fn declared(idents: &[String]) -> Vec<String> {
    const KEYWORDS: &[&str] = &[
        "static", "const", "fn", "struct", "enum", "type", "mod", "trait",
    ];
    idents
        .windows(2)
        .filter(|w| KEYWORDS.contains(&w[0].as_str()) && w[1] != "mut")
        .map(|w| w[1].clone())
        .collect()
}

/// The last path segment of an `impl`'s type, `Foo` for `impl<T> Trait for a::Foo<T>`.
fn type_name(ty: &syn::Type) -> String {
    match ty {
        syn::Type::Path(p) => p
            .path
            .segments
            .last()
            .map_or_else(String::new, |s| s.ident.to_string()),
        other => other.to_token_stream().to_string(),
    }
}

fn leaves(
    tree: &UseTree,
    prefix: &mut Vec<String>,
    segments: &mut Vec<Range<usize>>,
    lines: &Lines<'_>,
    out: &mut Vec<UseLeaf>,
) {
    let mut leaf = |name: String, last: String, span: proc_macro2::Span| {
        let mut path = prefix.clone();
        path.push(last);
        let mut segs = segments.clone();
        segs.push(lines.range(span));
        out.push(UseLeaf {
            name,
            path: path.join("::"),
            segments: segs,
        });
    };
    match tree {
        UseTree::Path(p) => {
            prefix.push(p.ident.to_string());
            segments.push(lines.range(p.ident.span()));
            leaves(&p.tree, prefix, segments, lines, out);
            prefix.pop();
            segments.pop();
        }
        UseTree::Name(n) => {
            // `use tokio::task::{self}` imports `task`.
            let name = if n.ident == "self" {
                prefix.last().cloned().unwrap_or_default()
            } else {
                n.ident.to_string()
            };
            leaf(name, n.ident.to_string(), n.ident.span());
        }
        UseTree::Rename(r) => leaf(r.rename.to_string(), r.ident.to_string(), r.span()),
        UseTree::Glob(g) => leaf("*".into(), "*".into(), g.star_token.span),
        UseTree::Group(g) => {
            for tree in &g.items {
                leaves(tree, prefix, segments, lines, out);
            }
        }
    }
}

impl Unit {
    /// The leaves of this `use` item that a byte range (an error's span) touches.
    pub(crate) fn leaves_at(&self, at: &Range<usize>) -> Vec<usize> {
        let overlaps = |r: &Range<usize>| r.start < at.end.max(at.start + 1) && at.start < r.end;
        (0..self.leaves.len())
            .filter(|&i| self.leaves[i].segments.iter().any(overlaps))
            .collect()
    }

    /// This `use` item printed again without the given leaves, or `None` when none is left.
    pub(crate) fn use_without(&self, drop: &[usize]) -> Option<String> {
        let mut item = self.use_item.clone()?;
        let mut index = 0;
        let tree = filter_tree(&item.tree, drop, &mut index)?;
        item.tree = tree;
        Some(item.to_token_stream().to_string())
    }
}

/// The tree without the leaves whose (depth-first) index is in `drop`.
fn filter_tree(tree: &UseTree, drop: &[usize], index: &mut usize) -> Option<UseTree> {
    match tree {
        UseTree::Path(p) => {
            let inner = filter_tree(&p.tree, drop, index)?;
            let mut p = p.clone();
            p.tree = Box::new(inner);
            Some(UseTree::Path(p))
        }
        UseTree::Name(_) | UseTree::Rename(_) | UseTree::Glob(_) => {
            let keep = !drop.contains(index);
            *index += 1;
            keep.then(|| tree.clone())
        }
        UseTree::Group(g) => {
            let mut g = g.clone();
            let items: Vec<UseTree> = g
                .items
                .iter()
                .filter_map(|t| filter_tree(t, drop, index))
                .collect();
            if items.is_empty() {
                return None;
            }
            g.items = items.into_iter().collect();
            Some(UseTree::Group(g))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FILE: &str = r#"#![cfg(feature = "full")]
use tokio::{net::TcpListener, task::{self, LocalSet}};

fn helper() -> u32 { 1 }

/// Doc.
#[tokio::test]
async fn plain() {
    let x = helper();
}

mod inner {
    #[test]
    fn nested() {}
}

rt_test! {
    use tokio::runtime::Runtime;

    #[test]
    fn in_macro() { let _ = rt(); }
}

test_accept! {
    (ip_str, "127.0.0.1:0"),
}

tokio::task_local! { static KEY: u32; pub static FOO: bool; }

#[cfg_attr(not(target_family = "wasm"), tokio::test(flavor = "multi_thread"))]
#[cfg_attr(target_family = "wasm", tokio::test)]
async fn cfg_attr_test() {}

macro_rules! rt_test { ($($t:tt)*) => { mod a { $($t)* } } }
"#;

    fn at<'a>(map: &'a SourceMap, needle: &str) -> Vec<&'a Unit> {
        map.unit_at(FILE.find(needle).unwrap()).unwrap()
    }

    #[test]
    fn finds_the_innermost_unit() {
        let map = SourceMap::parse(FILE).unwrap();
        let plain = at(&map, "helper();");
        assert_eq!(plain.len(), 1);
        assert_eq!(
            (plain[0].kind, plain[0].name.as_str()),
            (Kind::Test, "plain")
        );
        // Doc comments and attributes belong to the function.
        assert_eq!(at(&map, "/// Doc.")[0].name, "plain");
        assert_eq!(at(&map, "tokio::test]")[0].name, "plain");

        let nested = at(&map, "fn nested");
        assert_eq!(nested[0].kind, Kind::Mod);
        assert_eq!(nested[1].name, "nested");
        assert_eq!(nested[1].container, vec![Seg::Name("inner".into())]);

        let in_macro = at(&map, "rt();");
        assert_eq!(in_macro[0].kind, Kind::MacroBody);
        assert_eq!(in_macro[0].test_names, vec!["in_macro".to_string()]);
        assert_eq!(
            (in_macro[1].kind, in_macro[1].container.clone()),
            (Kind::Test, vec![Seg::Any])
        );

        let call = at(&map, "ip_str");
        assert_eq!(call[0].kind, Kind::MacroCall);
        assert!(call[0].test_names.contains(&"ip_str".to_string()));

        assert_eq!(at(&map, "$($t)*")[0].kind, Kind::MacroRules);
        assert_eq!(at(&map, "KEY")[0].declares, ["KEY", "FOO"]);
        assert_eq!(at(&map, "fn cfg_attr_test")[0].kind, Kind::Test);
        assert_eq!(at(&map, "fn helper")[0].kind, Kind::Fn);
        assert!(map.unit_at(FILE.find("#![cfg").unwrap()).is_none());
    }

    #[test]
    fn use_leaves_and_removing_one() {
        let map = SourceMap::parse(FILE).unwrap();
        let use_item = at(&map, "LocalSet")[0];
        assert_eq!(use_item.kind, Kind::Use);
        let paths: Vec<_> = use_item.leaves.iter().map(|l| l.path.as_str()).collect();
        assert_eq!(
            paths,
            [
                "tokio::net::TcpListener",
                "tokio::task::self",
                "tokio::task::LocalSet"
            ]
        );
        assert_eq!(use_item.leaves[1].name, "task");

        let start = FILE.find("LocalSet").unwrap();
        let hit = use_item.leaves_at(&(start..start + "LocalSet".len()));
        assert_eq!(hit, [2]);
        let text = use_item.use_without(&hit).unwrap();
        assert_eq!(
            text.replace(' ', ""),
            "usetokio::{net::TcpListener,task::{self}};"
        );
        // An error on a shared segment takes every leaf below it.
        let task = FILE.find("task::{").unwrap();
        assert_eq!(use_item.leaves_at(&(task..task + 4)), [1, 2]);
        assert!(use_item.use_without(&[0, 1, 2]).is_none());
    }
}
