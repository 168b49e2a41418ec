//! The order in which servers take turns within a round, rotating from round to round, so
//! that drift on a shared machine (and whatever running first or last costs) hits them alike.
//!
//! ```text
//! assert_eq!(rotation::order(1, 3), [1, 2, 0]); // round 1 of three servers starts with the second
//! ```
//!
//! Round `r` runs server `(k + r) % n` in turn `k`: every round runs each server once, and
//! over `n` rounds each server runs once in every position.

/// The servers' indices in the order round `round` runs them.
pub fn order(round: usize, n: usize) -> Vec<usize> {
    (0..n).map(|k| (k + round) % n).collect()
}
