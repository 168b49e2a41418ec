//! Command-line pieces the examples share, for clap's derive: the runtime's flags
//! ([`RuntimeArgs`]: `--workers`, `--spin`), the connection timeouts ([`TimeoutArgs`], with
//! the `hyper` feature), and value parsers that name what they expected.
//!
//! ```
//! use clap::Parser;
//! use examples_common::args::{RuntimeArgs, Spin};
//!
//! #[derive(Parser, Debug)]
//! struct Cli {
//!     #[command(flatten)]
//!     runtime: RuntimeArgs,
//! }
//! let cli = Cli::try_parse_from(["server", "--workers", "2", "--spin", "50us"]).unwrap();
//! assert_eq!(cli.runtime.workers, Some(2));
//! assert_eq!(cli.runtime.spin, Spin::Fixed(std::time::Duration::from_micros(50)));
//! let err = Cli::try_parse_from(["server", "--workers", "0"]).unwrap_err();
//! assert!(err.to_string().contains("--workers"));
//! ```

use std::time::Duration;

/// The idle workers' spin policy: `adaptive` (the runtime's default) or a fixed window.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Spin {
    /// The runtime's adaptive policy.
    #[default]
    Adaptive,
    /// A fixed window (`0` turns spinning off).
    Fixed(Duration),
}

impl std::str::FromStr for Spin {
    type Err = String;

    /// `adaptive`, or a duration as [`crate::duration::parse`] reads it.
    ///
    /// ```
    /// use examples_common::args::Spin;
    /// assert_eq!("adaptive".parse(), Ok(Spin::Adaptive));
    /// assert!("5".parse::<Spin>().is_err());
    /// ```
    fn from_str(s: &str) -> Result<Spin, String> {
        if s == "adaptive" {
            return Ok(Spin::Adaptive);
        }
        crate::duration::parse(s)
            .map(Spin::Fixed)
            .map_err(|e| format!("{e}, or `adaptive`"))
    }
}

/// `--workers` and `--spin`, for `#[command(flatten)]`.
#[derive(Debug, Clone, Default, clap::Args)]
pub struct RuntimeArgs {
    /// Worker threads [default: one per CPU]
    #[arg(long, value_name = "N", value_parser = positive)]
    pub workers: Option<usize>,
    /// How long an idle worker spins before it parks: a duration (50us, 1ms; 0 turns
    /// spinning off) or `adaptive`
    #[arg(long, value_name = "DURATION", default_value = "adaptive")]
    pub spin: Spin,
}

impl RuntimeArgs {
    /// A runtime builder with these settings.
    ///
    /// ```
    /// let rt = examples_common::args::RuntimeArgs::default().builder().build().unwrap();
    /// # drop(rt);
    /// ```
    pub fn builder(&self) -> spinpark::Builder {
        let mut b = spinpark::Builder::new();
        if let Some(n) = self.workers {
            b = b.worker_threads(n);
        }
        if let Spin::Fixed(d) = self.spin {
            b = b.spin(d);
        }
        b
    }
}

/// A whole number above zero.
///
/// ```
/// assert_eq!(examples_common::args::positive("3"), Ok(3));
/// assert!(examples_common::args::positive("0").is_err());
/// ```
pub fn positive(s: &str) -> Result<usize, String> {
    match s.parse() {
        Ok(n) if n > 0 => Ok(n),
        _ => Err(format!("expected a whole number above 0, got {s:?}")),
    }
}

/// A duration above zero, as [`crate::duration::parse`] reads it.
///
/// ```
/// use std::time::Duration;
/// assert_eq!(examples_common::args::timeout("2s"), Ok(Duration::from_secs(2)));
/// assert!(examples_common::args::timeout("0").is_err());
/// ```
pub fn timeout(s: &str) -> Result<Duration, String> {
    match crate::duration::parse(s)? {
        Duration::ZERO => Err("a timeout must be above 0".into()),
        d => Ok(d),
    }
}

/// The connection timeouts of the HTTP and gRPC examples, for `#[command(flatten)]`; see
/// [`crate::conn_timeouts`].
#[cfg(feature = "hyper")]
#[derive(Debug, Clone, clap::Args)]
pub struct TimeoutArgs {
    /// From accept until the protocol is known: the TLS handshake, then the HTTP/2 preface
    /// or the start of an HTTP/1 request
    #[arg(long, value_name = "DURATION", default_value = "10s", value_parser = timeout)]
    pub handshake_timeout: Duration,
    /// HTTP/1: a request's headers, and the wait for the next request on a kept-alive
    /// connection
    #[arg(long, value_name = "DURATION", default_value = "30s", value_parser = timeout)]
    pub header_timeout: Duration,
    /// After the handshake: a connection on which no byte moves for this long is closed
    #[arg(long, value_name = "DURATION", default_value = "60s", value_parser = timeout)]
    pub idle_timeout: Duration,
    /// HTTP/2: ping the client this often and close the connection when a ping goes
    /// unanswered as long (0: no pings)
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = crate::duration::parse)]
    pub h2_keep_alive: Duration,
    /// A request body's time from its request head, before what `--body-min-rate` adds: a
    /// body trickled slower than that rate is cut after about this long
    #[arg(long, value_name = "DURATION", default_value = "20s", value_parser = timeout)]
    pub body_timeout: Duration,
    /// Each this many bytes of request body received give it one more second (0: the body
    /// must be complete within --body-timeout)
    #[arg(long, value_name = "BYTES_PER_SEC", default_value_t = 1024)]
    pub body_min_rate: u32,
}

#[cfg(feature = "hyper")]
impl TimeoutArgs {
    /// The timeouts these flags set.
    ///
    /// ```
    /// use clap::Parser;
    /// #[derive(Parser)]
    /// struct Cli {
    ///     #[command(flatten)]
    ///     timeouts: examples_common::args::TimeoutArgs,
    /// }
    /// let cli = Cli::try_parse_from(["server"]).unwrap();
    /// assert_eq!(cli.timeouts.timeouts(), examples_common::conn_timeouts::Timeouts::DEFAULT);
    /// let cli = Cli::try_parse_from(["server", "--body-timeout", "5s", "--body-min-rate", "0"]);
    /// let t = cli.unwrap().timeouts.timeouts();
    /// assert_eq!((t.body, t.body_min_rate), (std::time::Duration::from_secs(5), 0));
    /// ```
    pub fn timeouts(&self) -> crate::conn_timeouts::Timeouts {
        crate::conn_timeouts::Timeouts {
            handshake: self.handshake_timeout,
            header_read: self.header_timeout,
            idle: self.idle_timeout,
            h2_keep_alive: (!self.h2_keep_alive.is_zero()).then_some(self.h2_keep_alive),
            body: self.body_timeout,
            body_min_rate: self.body_min_rate,
        }
    }
}
