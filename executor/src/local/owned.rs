//! The tasks a local set owns: what it must cancel, on its own thread, when it is dropped.
//!
//! Each entry is a task's shared state (to see whether it finished, and to abort it) and its
//! waker (to get it run once more, so that its future is dropped where it was made). Finished
//! entries are pruned whenever the list has doubled since the last prune, so the list holds at
//! most twice the live tasks and pushing stays O(1) amortised.

use std::sync::Arc;
use std::task::Waker;

use crate::task::TaskMeta;

/// The live (and some recently finished) tasks of a local set.
#[derive(Default)]
pub(crate) struct Owned {
    tasks: Vec<(Arc<TaskMeta>, Waker)>,
    /// Length after the last prune: the next prune comes at twice this.
    pruned_at: usize,
}

impl std::fmt::Debug for Owned {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Owned")
            .field("tasks", &self.tasks.len())
            .finish()
    }
}

impl Owned {
    /// Adds a task just spawned.
    pub(crate) fn push(&mut self, meta: Arc<TaskMeta>, waker: Waker) {
        if self.tasks.len() >= 2 * self.pruned_at.max(32) {
            self.prune();
        }
        self.tasks.push((meta, waker));
    }

    /// Drops the entries of finished tasks.
    fn prune(&mut self) {
        self.tasks.retain(|(meta, _)| !meta.is_finished());
        self.pruned_at = self.tasks.len();
    }

    /// Whether every task spawned on the set has finished.
    pub(crate) fn all_finished(&mut self) -> bool {
        self.prune();
        self.tasks.is_empty()
    }

    /// Takes every entry out, leaving the list empty (for the set's drop).
    pub(crate) fn take(&mut self) -> Vec<(Arc<TaskMeta>, Waker)> {
        self.pruned_at = 0;
        std::mem::take(&mut self.tasks)
    }

    /// The number of tasks not finished yet.
    pub(crate) fn alive(&self) -> usize {
        self.tasks.iter().filter(|(m, _)| !m.is_finished()).count()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finished_tasks_are_pruned_as_the_list_grows() {
        let mut owned = Owned::default();
        let waker = Waker::noop().clone();
        let metas: Vec<_> = (0..1000).map(|_| TaskMeta::new(None)).collect();
        for m in &metas {
            m.finish_for_test();
            owned.push(m.clone(), waker.clone());
        }
        // All finished: the list never holds more than the prune threshold allows.
        assert!(owned.tasks.len() <= 64, "{}", owned.tasks.len());
        let live = TaskMeta::new(None);
        owned.push(live.clone(), waker);
        assert_eq!(owned.alive(), 1);
        assert!(!owned.all_finished());
        live.finish_for_test();
        assert!(owned.all_finished());
    }
}
