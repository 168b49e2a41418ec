//! `#[spinpark::main]` and `#[spinpark::test]`: attributes that run an
//! `async fn` on its own spinpark runtime, as a program's entry point or as a
//! test.
//!
//! Use them through the `spinpark` crate, which re-exports both:
//!
//! ```no_run
//! #[spinpark::main(worker_threads = 4, spin = "50us")]
//! async fn main() {
//!     println!("running on a spinpark runtime");
//! }
//! ```
//!
//! # How it works
//!
//! The attribute turns the `async fn` into a plain `fn` with the same
//! attributes, visibility, name and return type. Its body builds a runtime,
//! calling a `Builder` method only for the arguments that were given, and
//! blocks on the original body, now an `async` block. The example above
//! becomes:
//!
//! ```ignore
//! fn main() {
//!     ::spinpark::Builder::new()
//!         .worker_threads(4usize)
//!         .spin(::core::time::Duration::from_nanos(50000u64))
//!         .build()
//!         .expect("failed to build the spinpark runtime")
//!         .block_on(async {
//!             println!("running on a spinpark runtime");
//!         })
//! }
//! ```
//!
//! `#[spinpark::test]` emits the same function with
//! `#[::core::prelude::v1::test]` in front of it, so every test gets a runtime
//! of its own. With `flavor = "current_thread"` (`#[spinpark::test]`'s
//! default) the chain starts from `Builder::new_current_thread()` instead, and
//! `start_paused = true` adds `.start_paused(true)`, `name = "..."`
//! `.name("...")`.
//!
//! The arguments are checked while compiling: the `spin` string is turned into
//! a number of nanoseconds here, not at run time. When something is wrong the
//! attribute emits a `compile_error!` pointing at the offending tokens, plus a
//! plain `fn` with the same name and attributes that holds the original
//! function (untouched, so editors can still complete inside it) as an unused
//! inner item. That keeps the compiler from piling further errors, such as
//! "`main` function not found", on top of the one that matters.

#![warn(missing_docs)]

use proc_macro::TokenStream;
use proc_macro2::TokenStream as TokenStream2;
use quote::{quote, ToTokens};
use syn::ext::IdentExt;
use syn::parse::{ParseStream, Parser};
use syn::{Error, Expr, ExprLit, Ident, ItemFn, Lit, LitStr, Path, Token};

/// Runs `async fn main` on a spinpark runtime.
///
/// ```no_run
/// #[spinpark::main]
/// async fn main() {
///     println!("hello");
/// }
/// ```
///
/// The runtime is built with `spinpark::Builder` and its defaults, changed by
/// these optional arguments:
///
/// - `flavor = "multi_thread"` (the default for `main`): worker threads;
///   `flavor = "current_thread"`: no worker thread, tasks run on the thread
///   that runs `main` (`Builder::new_current_thread`); `flavor = "local"`: the
///   same with a local set, so `spawn_local` works everywhere in it
///   (`Builder::build_local`). As in tokio.
/// - `worker_threads = 4`: the number of worker threads (at least 1); not with
///   `flavor = "current_thread"`.
/// - `spin = "50us"`: a fixed window, how long an idle worker spins before it
///   parks (`Builder::spin`); a number followed by `ns`, `us`, `ms` or `s`.
///   Decimals are accepted as long as the result is a whole number of
///   nanoseconds (`"1.5ms"`, `"2.5us"`), and `"0"` turns spinning off.
///   `spin = "adaptive"` asks for the adaptive policy, which is also what you
///   get without `spin`: it learns the window from the gaps it sees.
/// - `max_spinners = 2`: how many idle workers may spin at once; not with
///   `flavor = "current_thread"`.
/// - `tokio_compat` (a bare flag, no value): start the background tokio
///   runtime of `Builder::tokio_compat`, so that tokio-bound crates work inside
///   tasks. Needs spinpark's `tokio-compat` feature.
/// - `name = "my-service"`: the runtime's name (`Builder::name`, read back with
///   `Handle::name`).
/// - `start_paused = true`: the runtime's clock starts paused
///   (`Builder::start_paused`, `spinpark::time::pause`): sleeps and timeouts
///   complete at once, the clock jumping to the next timer whenever nothing
///   else is left to do. Needs spinpark's `test-util` feature and a
///   current-thread runtime. Mostly for tests (see [`macro@test`]).
/// - `crate = "path"`: where to find spinpark, for crates that re-export it,
///   e.g. `crate = "my_reexport::spinpark"`. Defaults to `::spinpark`.
///
/// The return type is kept, so `main` can return a `Result`:
///
/// ```no_run
/// #[spinpark::main(worker_threads = 2, spin = "0")]
/// async fn main() -> Result<(), Box<dyn std::error::Error>> {
///     let port: u16 = "8080".parse()?;
///     println!("would listen on {port}");
///     Ok(())
/// }
/// ```
///
/// It panics with "failed to build the spinpark runtime" if the runtime
/// cannot be built. The function must be `async`; a function named `main`
/// takes no arguments, but, as with tokio's, the attribute works on any other
/// `async fn` too, arguments and `self` included: each call then builds a
/// runtime and blocks on the body.
///
/// ```
/// struct Client(u32);
/// impl Client {
///     #[spinpark::main(flavor = "current_thread", name = "blocking-client")]
///     async fn fetch(&self, n: u32) -> u32 {
///         assert_eq!(spinpark::Handle::current().name(), Some("blocking-client"));
///         spinpark::spawn(async move { n * 2 }).await.unwrap() + self.0
///     }
/// }
/// assert_eq!(Client(1).fetch(20), 41);
/// ```
#[proc_macro_attribute]
pub fn main(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Main, args.into(), item.into()).into()
}

/// Runs an `async fn` test on a spinpark runtime of its own.
///
/// ```no_run
/// #[spinpark::test]
/// async fn adds() {
///     assert_eq!(async { 2 + 2 }.await, 4);
/// }
///
/// #[spinpark::test(worker_threads = 2, spin = "0")]
/// #[should_panic(expected = "boom")]
/// async fn panics() {
///     panic!("boom");
/// }
/// # fn main() {}
/// ```
///
/// It takes the same arguments as [`macro@main`] (`flavor`, `worker_threads`,
/// `spin`, `max_spinners`, `tokio_compat`, `name`, `start_paused` and
/// `crate`). The one meant for tests:
///
/// - `start_paused = true`: the test starts with the runtime's clock paused
///   (`Builder::start_paused`, `spinpark::time::pause`): sleeps and timeouts
///   complete at once, the clock jumping to the next timer whenever the test
///   has nothing else to do. Needs spinpark's `test-util` feature and a
///   current-thread runtime.
///
/// **The runtime is current-thread unless asked otherwise**, as with
/// `#[tokio::test]`: the test's tasks run on the test's thread, so a test
/// ported from tokio, `time::pause()` included, works with only the paths
/// changed. `flavor = "multi_thread"` gives worker threads; so does
/// `worker_threads` or `max_spinners` without a `flavor` (they only mean
/// something there).
///
/// ```no_run
/// #[spinpark::test(flavor = "multi_thread", worker_threads = 2)]
/// async fn on_two_workers() {
///     assert_eq!(spinpark::Handle::current().worker_threads(), 2);
/// }
/// # fn main() {}
/// ```
///
/// Anything not given is left to the `spinpark::Builder` defaults. The
/// function's other attributes, such as `#[should_panic]` and `#[ignore]`, and
/// its return type are kept, so a test may return a `Result`. Do not add
/// `#[test]` as well: this attribute already marks the function as a test.
#[proc_macro_attribute]
pub fn test(args: TokenStream, item: TokenStream) -> TokenStream {
    expand(Kind::Test, args.into(), item.into()).into()
}

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Main,
    Test,
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Flavor {
    CurrentThread,
    MultiThread,
    /// A current-thread runtime with a local set (`Builder::build_local`): `spawn_local`
    /// works everywhere in it.
    Local,
}

/// The arguments, checked. `None` leaves the setting to the `Builder`.
#[derive(Default)]
struct Config {
    /// With the name's span, for errors.
    flavor: Option<(Flavor, Ident)>,
    worker_threads: Option<(usize, Ident)>,
    /// `Some(None)`: `spin = "adaptive"`; `Some(Some(n))`: a fixed window of n ns.
    spin_nanos: Option<Option<u64>>,
    max_spinners: Option<(usize, Ident)>,
    tokio_compat: bool,
    start_paused: Option<(bool, Ident)>,
    /// The runtime's name (`Builder::name`, `Handle::name`).
    name: Option<LitStr>,
    krate: Option<Path>,
}

const ARGUMENTS: &str = "`flavor`, `worker_threads`, `spin`, `max_spinners`, `tokio_compat`, \
                         `start_paused`, `name` and `crate`";

fn expand(kind: Kind, args: TokenStream2, item: TokenStream2) -> TokenStream2 {
    let func: ItemFn = match syn::parse2(item.clone()) {
        Ok(func) => func,
        Err(err) => {
            let err = err.to_compile_error();
            return quote!(#err #item);
        }
    };

    let mut errors = Vec::new();
    let config = parse_args.parse2(args).unwrap_or_else(|err| {
        errors.push(err);
        Config::default()
    });
    let flavor = match check(kind, &config, cfg!(feature = "test-util")) {
        Ok(flavor) => flavor,
        Err(err) => {
            errors.push(err);
            Flavor::MultiThread
        }
    };

    let sig = &func.sig;
    if sig.asyncness.is_none() {
        errors.push(Error::new(
            sig.fn_token.span,
            "the `async` keyword is missing from the function declaration",
        ));
    }
    // As tokio's: `#[spinpark::main]` on any other function (a method taking `self`, a
    // helper taking arguments) runs its body on a runtime of its own, arguments and all.
    let refuses_inputs = kind == Kind::Test || sig.ident == "main";
    if refuses_inputs && !sig.inputs.is_empty() {
        let msg = match kind {
            Kind::Main => "the main function cannot accept arguments",
            Kind::Test => "test functions cannot accept arguments",
        };
        errors.push(Error::new_spanned(&sig.inputs, msg));
    }
    if kind == Kind::Test {
        let is_test = |attr: &&syn::Attribute| {
            attr.path()
                .segments
                .last()
                .is_some_and(|s| s.ident == "test")
        };
        if let Some(attr) = func.attrs.iter().find(is_test) {
            errors.push(Error::new_spanned(
                attr,
                "a second test attribute: #[spinpark::test] already makes this function a test",
            ));
        }
    }

    let error = errors.into_iter().reduce(|mut all, err| {
        all.combine(err);
        all
    });
    match error {
        Some(err) => with_error(err, func),
        None => expansion(kind, flavor, config, func),
    }
}

/// The runtime flavour the arguments ask for, or the error of a combination that cannot be:
/// `worker_threads`/`max_spinners` on a current-thread runtime, `start_paused` without
/// spinpark's `test-util` feature (`test_util`) or on a multi-thread runtime.
fn check(kind: Kind, config: &Config, test_util: bool) -> syn::Result<Flavor> {
    let explicit = config.flavor.as_ref().map(|(f, _)| *f);
    // Only worker threads give these a meaning, so a test that sets one wants them.
    let wants_workers = config.worker_threads.is_some() || config.max_spinners.is_some();
    let flavor = match (explicit, kind) {
        (Some(f), _) => f,
        (None, Kind::Main) => Flavor::MultiThread,
        (None, Kind::Test) if wants_workers => Flavor::MultiThread,
        (None, Kind::Test) => Flavor::CurrentThread,
    };
    if flavor != Flavor::MultiThread {
        let only_multi = [&config.worker_threads, &config.max_spinners];
        if let Some((_, name)) = only_multi.into_iter().flatten().next() {
            return Err(Error::new_spanned(
                name,
                format!(
                    "`{name}` does not apply to a current-thread runtime (its one worker is the \
                     thread in block_on): remove it, or use `flavor = \"multi_thread\"`"
                ),
            ));
        }
    }
    if let Some((paused, name)) = &config.start_paused {
        if !test_util {
            return Err(Error::new_spanned(
                name,
                "`start_paused` needs spinpark's `test-util` feature: \
                 spinpark = { version = \"0.1\", features = [\"test-util\"] } \
                 (in [dev-dependencies])",
            ));
        }
        if *paused && flavor == Flavor::MultiThread {
            let why = match (explicit, kind) {
                (Some(_), _) => "remove `flavor = \"multi_thread\"`",
                (None, Kind::Main) => {
                    "add `flavor = \"current_thread\"` (#[spinpark::main]'s default is the \
                     multi-thread runtime)"
                }
                (None, Kind::Test) => {
                    "remove `worker_threads` and `max_spinners`, which ask for worker threads"
                }
            };
            return Err(Error::new_spanned(
                name,
                format!(
                    "`start_paused` needs a current-thread runtime: time cannot be paused on \
                     the multi-thread one (see `spinpark::time::pause`); {why}"
                ),
            ));
        }
    }
    Ok(flavor)
}

/// Parses `name = value, ...` (and the bare flag `tokio_compat`) as far as the first mistake.
fn parse_args(input: ParseStream) -> syn::Result<Config> {
    let mut config = Config::default();
    while !input.is_empty() {
        // `parse_any` so that the keyword `crate` is accepted as a name.
        let name = input.call(Ident::parse_any)?;
        let key = name.to_string();
        if !matches!(
            key.as_str(),
            "flavor"
                | "worker_threads"
                | "spin"
                | "max_spinners"
                | "tokio_compat"
                | "start_paused"
                | "name"
                | "crate"
        ) {
            let msg = format!("unknown argument `{key}`; the arguments are {ARGUMENTS}");
            return Err(Error::new_spanned(name, msg));
        }
        if key == "tokio_compat" {
            if input.peek(Token![=]) {
                let msg = "`tokio_compat` is a flag and takes no value: write `tokio_compat`";
                return Err(Error::new_spanned(name, msg));
            }
            if std::mem::replace(&mut config.tokio_compat, true) {
                return Err(Error::new_spanned(name, "`tokio_compat` is given twice"));
            }
            if !input.is_empty() {
                input.parse::<Token![,]>()?;
            }
            continue;
        }
        input.parse::<Token![=]>()?;
        let value: Expr = input.parse()?;

        let taken = match key.as_str() {
            "flavor" => {
                let lit = string(&key, &value)?;
                let flavor = match lit.value().as_str() {
                    "current_thread" => Flavor::CurrentThread,
                    "multi_thread" => Flavor::MultiThread,
                    "local" => Flavor::Local,
                    other => {
                        let msg = format!(
                            "`flavor` is \"current_thread\", \"multi_thread\" or \"local\", \
                             not {other:?}"
                        );
                        return Err(Error::new(lit.span(), msg));
                    }
                };
                set(&mut config.flavor, (flavor, name.clone()))
            }
            "worker_threads" => {
                let n = count(&key, &value, 1)?;
                set(&mut config.worker_threads, (n, name.clone()))
            }
            "max_spinners" => {
                let n = count(&key, &value, 0)?;
                set(&mut config.max_spinners, (n, name.clone()))
            }
            "start_paused" => {
                let paused = boolean(&key, &value)?;
                set(&mut config.start_paused, (paused, name.clone()))
            }
            "name" => {
                let lit = string(&key, &value)?;
                set(&mut config.name, LitStr::new(&lit.value(), lit.span()))
            }
            "spin" => {
                let lit = string(&key, &value)?;
                let text = lit.value();
                let nanos = match text.as_str() {
                    "adaptive" => None,
                    _ => Some(parse_spin(&text).map_err(|msg| Error::new(lit.span(), msg))?),
                };
                set(&mut config.spin_nanos, nanos)
            }
            _ => {
                let lit = string(&key, &value)?;
                let path = lit.parse_with(Path::parse_mod_style).map_err(|_| {
                    let msg = format!(
                        "`crate` must be a path such as \"spinpark\" or \
                         \"my_reexport::spinpark\", not {:?}",
                        lit.value()
                    );
                    Error::new(lit.span(), msg)
                })?;
                set(&mut config.krate, path)
            }
        };
        if taken {
            return Err(Error::new_spanned(name, format!("`{key}` is given twice")));
        }

        if !input.is_empty() {
            input.parse::<Token![,]>()?;
        }
    }
    Ok(config)
}

/// Stores `value`, returning whether the slot was already taken.
fn set<T>(slot: &mut Option<T>, value: T) -> bool {
    slot.replace(value).is_some()
}

/// An unsuffixed (or `usize`) integer literal of at least `min`.
fn count(key: &str, value: &Expr, min: usize) -> syn::Result<usize> {
    let n = match value {
        Expr::Lit(ExprLit {
            lit: Lit::Int(int), ..
        }) if matches!(int.suffix(), "" | "usize") => int.base10_parse::<usize>()?,
        _ => {
            let msg = format!("`{key}` takes an integer, e.g. `{key} = 4`");
            return Err(Error::new_spanned(value, msg));
        }
    };
    if n < min {
        return Err(Error::new_spanned(
            value,
            format!("`{key}` must be at least {min}"),
        ));
    }
    Ok(n)
}

/// `true` or `false`.
fn boolean(key: &str, value: &Expr) -> syn::Result<bool> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Bool(b), ..
        }) => Ok(b.value),
        _ => {
            let msg = format!("`{key}` takes `true` or `false`, e.g. `{key} = true`");
            Err(Error::new_spanned(value, msg))
        }
    }
}

/// A string literal.
fn string<'a>(key: &str, value: &'a Expr) -> syn::Result<&'a LitStr> {
    match value {
        Expr::Lit(ExprLit {
            lit: Lit::Str(lit), ..
        }) => Ok(lit),
        _ => {
            let example = match key {
                "spin" => "\"50us\"",
                "flavor" => "\"current_thread\"",
                "name" => "\"my-service\"",
                _ => "\"spinpark\"",
            };
            let msg = format!("`{key}` takes a string, e.g. `{key} = {example}`");
            Err(Error::new_spanned(value, msg))
        }
    }
}

/// Reads a `spin` duration ("50us", "1.5ms", "0", ...) as nanoseconds.
fn parse_spin(text: &str) -> Result<u64, String> {
    if text == "0" {
        return Ok(0);
    }
    let malformed = || {
        format!(
            "malformed `spin` duration {text:?}: expected a number and a unit \
             (ns, us, ms or s) such as \"50us\" or \"1.5ms\", \"0\" to turn spinning off, \
             or \"adaptive\""
        )
    };
    let unit_at = text
        .find(|c: char| !c.is_ascii_digit() && c != '.')
        .unwrap_or(text.len());
    let (number, unit) = text.split_at(unit_at);
    let unit_nanos: u128 = match unit {
        "ns" => 1,
        "us" => 1_000,
        "ms" => 1_000_000,
        "s" => 1_000_000_000,
        _ => return Err(malformed()),
    };
    let (whole, fraction) = number.split_once('.').unwrap_or((number, ""));
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(whole) || (number.contains('.') && !digits(fraction)) {
        return Err(malformed());
    }

    let too_long = || format!("`spin` duration {text:?} does not fit in a u64 of nanoseconds");
    let not_whole = || format!("`spin` duration {text:?} is not a whole number of nanoseconds");
    let fraction = fraction.trim_end_matches('0');
    if fraction.len() > 9 {
        return Err(not_whole());
    }
    let whole: u128 = whole.parse().map_err(|_| too_long())?;
    let fraction_scale = 10u128.pow(fraction.len() as u32);
    let fraction_nanos = fraction.parse::<u128>().unwrap_or(0) * unit_nanos;
    if fraction_nanos % fraction_scale != 0 {
        return Err(not_whole());
    }
    whole
        .checked_mul(unit_nanos)
        .and_then(|n| n.checked_add(fraction_nanos / fraction_scale))
        .and_then(|n| u64::try_from(n).ok())
        .ok_or_else(too_long)
}

fn expansion(kind: Kind, flavor: Flavor, config: Config, func: ItemFn) -> TokenStream2 {
    let ItemFn {
        attrs,
        vis,
        mut sig,
        block,
    } = func;
    sig.asyncness = None;

    let krate = match config.krate {
        Some(path) => path.into_token_stream(),
        None => quote!(::spinpark),
    };
    let builder = match flavor {
        Flavor::CurrentThread | Flavor::Local => quote!(new_current_thread),
        Flavor::MultiThread => quote!(new),
    };
    let build = match flavor {
        Flavor::Local => quote!(.build_local(::core::default::Default::default())),
        _ => quote!(.build()),
    };
    let worker_threads = config
        .worker_threads
        .map(|(n, _)| quote!(.worker_threads(#n)));
    // `spin = "adaptive"` is the `Builder`'s default policy: nothing to call.
    let spin = config
        .spin_nanos
        .flatten()
        .map(|n| quote!(.spin(::core::time::Duration::from_nanos(#n))));
    let max_spinners = config.max_spinners.map(|(n, _)| quote!(.max_spinners(#n)));
    let tokio_compat = config.tokio_compat.then(|| quote!(.tokio_compat()));
    let start_paused = config
        .start_paused
        .filter(|(paused, _)| *paused)
        .map(|_| quote!(.start_paused(true)));
    let name = config.name.map(|lit| quote!(.name(#lit)));
    let test_attr = (kind == Kind::Test).then(|| quote!(#[::core::prelude::v1::test]));

    quote! {
        #test_attr
        #(#attrs)*
        #vis #sig {
            #krate::Builder::#builder()
                #worker_threads
                #spin
                #max_spinners
                #tokio_compat
                #start_paused
                #name
                #build
                .expect("failed to build the spinpark runtime")
                .block_on(async #block)
        }
    }
}

/// The errors, plus a stand-in `fn` that compiles as a `main` or a test and
/// keeps the original function, unchanged, as an unused inner item.
fn with_error(err: Error, func: ItemFn) -> TokenStream2 {
    let err = err.to_compile_error();
    let ItemFn {
        attrs,
        vis,
        sig,
        block,
    } = func;
    let (ident, output) = (&sig.ident, &sig.output);
    quote! {
        #err
        #[allow(dead_code)]
        #(#attrs)*
        #vis fn #ident() #output {
            #[allow(dead_code)]
            #sig #block
            ::core::unreachable!()
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{check, parse_args, parse_spin, Flavor, Kind};
    use quote::quote;
    use syn::parse::Parser;

    fn flavor(kind: Kind, args: proc_macro2::TokenStream) -> Result<Flavor, String> {
        let config = parse_args.parse2(args).map_err(|e| e.to_string())?;
        check(kind, &config, true).map_err(|e| e.to_string())
    }

    #[test]
    fn default_flavors() {
        let is = |f: Result<Flavor, String>, want: Flavor| f.is_ok_and(|f| f == want);
        assert!(is(flavor(Kind::Main, quote!()), Flavor::MultiThread));
        assert!(is(flavor(Kind::Test, quote!()), Flavor::CurrentThread));
        assert!(is(
            flavor(Kind::Test, quote!(worker_threads = 2)),
            Flavor::MultiThread
        ));
        assert!(is(
            flavor(Kind::Test, quote!(max_spinners = 1)),
            Flavor::MultiThread
        ));
        assert!(is(
            flavor(Kind::Test, quote!(spin = "10us")),
            Flavor::CurrentThread
        ));
        assert!(is(
            flavor(Kind::Main, quote!(flavor = "current_thread")),
            Flavor::CurrentThread
        ));
        assert!(is(
            flavor(Kind::Test, quote!(start_paused = true)),
            Flavor::CurrentThread
        ));
        assert!(is(
            flavor(Kind::Test, quote!(flavor = "local", start_paused = true)),
            Flavor::Local
        ));
        assert!(flavor(Kind::Test, quote!(flavor = "local", worker_threads = 2)).is_err());
    }

    #[test]
    fn main_takes_start_paused_on_a_current_thread_runtime() {
        let is = |f: Result<Flavor, String>, want: Flavor| f.is_ok_and(|f| f == want);
        assert!(is(
            flavor(
                Kind::Main,
                quote!(flavor = "current_thread", start_paused = true)
            ),
            Flavor::CurrentThread
        ));
        let err = flavor(Kind::Main, quote!(start_paused = true)).unwrap_err();
        assert!(err.contains("add `flavor = \"current_thread\"`"), "{err}");
    }

    #[test]
    fn name_is_a_string_given_once() {
        let config = parse_args.parse2(quote!(name = "svc")).unwrap();
        assert_eq!(config.name.map(|n| n.value()).as_deref(), Some("svc"));
        let twice = parse_args.parse2(quote!(name = "a", name = "b"));
        assert!(twice.is_err_and(|e| e.to_string().contains("given twice")));
        let not_a_string = parse_args.parse2(quote!(name = 3));
        assert!(not_a_string.is_err_and(|e| e.to_string().contains("takes a string")));
    }

    #[test]
    fn start_paused_without_test_util_names_the_feature() {
        let config = parse_args.parse2(quote!(start_paused = true)).unwrap();
        let err = check(Kind::Test, &config, false).unwrap_err().to_string();
        assert!(err.contains("`test-util` feature"), "{err}");
    }

    #[test]
    fn spin_durations() {
        assert_eq!(parse_spin("0"), Ok(0));
        assert_eq!(parse_spin("0us"), Ok(0));
        assert_eq!(parse_spin("7ns"), Ok(7));
        assert_eq!(parse_spin("50us"), Ok(50_000));
        assert_eq!(parse_spin("1.5ms"), Ok(1_500_000));
        assert_eq!(parse_spin("2s"), Ok(2_000_000_000));
        assert_eq!(parse_spin("0.000000001s"), Ok(1));
        assert_eq!(parse_spin("1.250us"), Ok(1_250));
        assert_eq!(parse_spin("18446744073709551615ns"), Ok(u64::MAX));
    }

    #[test]
    fn bad_spin_durations() {
        for bad in [
            "",
            "5",
            "5 parsecs",
            "5 us",
            "us",
            ".5ms",
            "5.ms",
            "1.2.3s",
            "-1ms",
            "5m",
            "1e3ns",
            "1.5ns",
            "0.0000000001s",
            "18446744073709551616ns",
            "99999999999999999999999999999999999999999s",
        ] {
            assert!(parse_spin(bad).is_err(), "{bad:?} was accepted");
        }
    }
}
