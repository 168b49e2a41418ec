//! Spread over rounds and paired ratios: what lets a table say "better" only when it is.
//!
//! ```text
//! let s = Spread::of([25.1, 26.4, 28.0]);
//! assert_eq!(s.show(1), "26.4 (25.1-28.0)");
//! let v = verdict(&paired_ratios(&[3.1, 3.3], &[1.0, 1.1]), Better::Higher); // Verdict::Better
//! ```
//!
//! Each round measures spinpark and tokio back to back, so the ratio of one round's two
//! figures cancels most of the drift of a shared machine. A verdict is `better` or `worse`
//! only when every round's ratio is on the same side of 1 by more than [`DEADBAND`];
//! otherwise the difference is within the noise the rounds show.

/// Ratios within 1 +- DEADBAND count as equal.
const DEADBAND: f64 = 0.02;

/// The median and the range of one figure over rounds.
#[derive(Debug, Clone, Copy)]
pub struct Spread {
    pub median: f64,
    pub min: f64,
    pub max: f64,
}

impl Spread {
    pub fn of(values: impl IntoIterator<Item = f64>) -> Spread {
        let mut v: Vec<f64> = values.into_iter().filter(|x| x.is_finite()).collect();
        if v.is_empty() {
            return Spread {
                median: f64::NAN,
                min: f64::NAN,
                max: f64::NAN,
            };
        }
        v.sort_by(|a, b| a.total_cmp(b));
        let k = v.len();
        let median = if k % 2 == 1 {
            v[k / 2]
        } else {
            (v[k / 2 - 1] + v[k / 2]) / 2.0
        };
        Spread {
            median,
            min: v[0],
            max: v[k - 1],
        }
    }

    /// `median (min-max)` with `prec` decimals; just the median when the range is one value.
    pub fn show(&self, prec: usize) -> String {
        if !self.median.is_finite() {
            return "-".into();
        }
        let m = format!("{:.*}", prec, self.median);
        let (a, b) = (
            format!("{:.*}", prec, self.min),
            format!("{:.*}", prec, self.max),
        );
        if a == b {
            m
        } else {
            format!("{m} ({a}-{b})")
        }
    }

    /// As [`Spread::show`], for a ratio: `0.30x (0.28-0.33)`.
    pub fn show_ratio(&self) -> String {
        if !self.median.is_finite() {
            return "-".into();
        }
        let s = self.show(2);
        match s.find(' ') {
            Some(i) => format!("{}x{}", &s[..i], &s[i..]),
            None => format!("{s}x"),
        }
    }
}

/// `a[i] / b[i]` for each round where `b[i]` is not zero.
pub fn paired_ratios(a: &[f64], b: &[f64]) -> Vec<f64> {
    a.iter()
        .zip(b)
        .filter(|(_, &y)| y > 0.0)
        .map(|(x, y)| x / y)
        .collect()
}

/// Which direction of a figure is good.
#[derive(Debug, Clone, Copy)]
pub enum Better {
    /// Requests per second.
    Higher,
    /// Latency, CPU.
    Lower,
}

/// What paired ratios say about spinpark against tokio.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    Better,
    Worse,
    WithinNoise,
    /// Fewer than two rounds: no spread to judge by.
    Unknown,
}

impl Verdict {
    pub fn word(self) -> &'static str {
        match self {
            Verdict::Better => "better",
            Verdict::Worse => "worse",
            Verdict::WithinNoise => "within noise",
            Verdict::Unknown => "n/a (1 round)",
        }
    }
}

/// The verdict of spinpark/tokio `ratios`, one per round.
pub fn verdict(ratios: &[f64], better: Better) -> Verdict {
    if ratios.len() < 2 {
        return Verdict::Unknown;
    }
    let s = Spread::of(ratios.iter().copied());
    let (above, below) = (s.min > 1.0 + DEADBAND, s.max < 1.0 - DEADBAND);
    match (better, above, below) {
        (Better::Higher, true, _) | (Better::Lower, _, true) => Verdict::Better,
        (Better::Higher, _, true) | (Better::Lower, true, _) => Verdict::Worse,
        _ => Verdict::WithinNoise,
    }
}
