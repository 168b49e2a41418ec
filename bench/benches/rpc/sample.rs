//! One run of one mode against one server, reduced to per-request figures.
//!
//! ```text
//! let s = Sample::new(&load_result, server_usage, client_usage, Caps { server: 1, client: 1 });
//! println!("{:.0} req/s, p50 {:.1} us, client-bound: {}", s.reqs_per_sec, s.p50, s.client_bound);
//! ```
//!
//! Times per request are in microseconds; "cores" are CPU time over wall time. A run is
//! client-bound when the load generator used at least 90% of the CPUs it could use (its
//! threads, at most its CPU set) while the server did not. Beside a neighbour process
//! (`--only neighbour`), the runner also records the neighbour's work rate.

use crate::load::LoadResult;
use crate::server::Usage;

/// Below this many latency samples, p99.9 is not reported.
pub const P999_MIN_SAMPLES: u64 = 10_000;

/// How many CPUs the server and the load generator could use in a run.
#[derive(Debug, Clone, Copy)]
pub struct Caps {
    pub server: usize,
    pub client: usize,
}

/// One run of one mode on one server.
#[derive(Debug, Clone, Copy)]
pub struct Sample {
    pub reqs_per_sec: f64,
    pub user_us: f64,
    pub sys_us: f64,
    pub cs: f64,
    pub client_cpu_us: f64,
    pub server_cores: f64,
    pub client_cores: f64,
    pub mean: f64,
    pub min: f64,
    pub p25: f64,
    pub p50: f64,
    pub p75: f64,
    pub p90: f64,
    pub p99: f64,
    /// NaN below [`P999_MIN_SAMPLES`].
    pub p999: f64,
    pub max: f64,
    pub achieved_gap_us: f64,
    pub samples: u64,
    pub client_bound: bool,
    /// Units of work per second the CPU-bound neighbour did during the run (`neighbour.rs`);
    /// NaN without a neighbour.
    pub neighbour_units_per_sec: f64,
}

/// A named field of a [`Sample`].
pub type Field = (&'static str, fn(&Sample) -> f64);

/// Every figure of a sample, by the name the JSON output uses.
pub const FIELDS: [Field; 20] = [
    ("reqs_per_sec", |s| s.reqs_per_sec),
    ("server_user_us_per_req", |s| s.user_us),
    ("server_sys_us_per_req", |s| s.sys_us),
    ("server_ctx_switches_per_req", |s| s.cs),
    ("client_cpu_us_per_req", |s| s.client_cpu_us),
    ("server_cores", |s| s.server_cores),
    ("client_cores", |s| s.client_cores),
    ("latency_mean_us", |s| s.mean),
    ("latency_min_us", |s| s.min),
    ("latency_p25_us", |s| s.p25),
    ("latency_p50_us", |s| s.p50),
    ("latency_p75_us", |s| s.p75),
    ("latency_p90_us", |s| s.p90),
    ("latency_p99_us", |s| s.p99),
    ("latency_p999_us", |s| s.p999),
    ("latency_max_us", |s| s.max),
    ("achieved_gap_us", |s| s.achieved_gap_us),
    ("samples", |s| s.samples as f64),
    ("client_bound", |s| s.client_bound as u8 as f64),
    ("neighbour_work_per_sec", |s| s.neighbour_units_per_sec),
];

impl Sample {
    pub fn new(r: &LoadResult, server: Usage, client: Usage, caps: Caps) -> Sample {
        let n = r.requests.max(1) as f64;
        let q = |p: f64| r.latency.value_at_quantile(p) as f64 / 1000.0;
        let wall_us = r.elapsed.as_secs_f64() * 1e6;
        let server_cores = (server.user_us + server.sys_us) as f64 / wall_us;
        let client_cores = (client.user_us + client.sys_us) as f64 / wall_us;
        let samples = r.latency.len();
        Sample {
            reqs_per_sec: r.requests as f64 / r.elapsed.as_secs_f64(),
            user_us: server.user_us as f64 / n,
            sys_us: server.sys_us as f64 / n,
            cs: (server.vol_cs + server.invol_cs) as f64 / n,
            client_cpu_us: (client.user_us + client.sys_us) as f64 / n,
            server_cores,
            client_cores,
            mean: r.latency.mean() / 1000.0,
            min: r.latency.min() as f64 / 1000.0,
            p25: q(0.25),
            p50: q(0.50),
            p75: q(0.75),
            p90: q(0.90),
            p99: q(0.99),
            p999: if samples >= P999_MIN_SAMPLES {
                q(0.999)
            } else {
                f64::NAN
            },
            max: r.latency.max() as f64 / 1000.0,
            achieved_gap_us: r.achieved_gap.map_or(0.0, |g| g.as_secs_f64() * 1e6),
            samples,
            client_bound: client_cores >= 0.9 * caps.client as f64
                && server_cores < 0.9 * caps.server as f64,
            neighbour_units_per_sec: f64::NAN,
        }
    }

    /// Server CPU (user + sys) per request, in microseconds.
    pub fn server_cpu_us(&self) -> f64 {
        self.user_us + self.sys_us
    }
}
