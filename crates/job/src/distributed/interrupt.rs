//! A request to stop a run from outside it: a signal (SIGTERM, SIGINT) that the binary
//! receives and the run polls.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use crate::error::JobError;

/// Set to the number of the signal that asks the run to stop, or 0. Cloned handles share
/// the flag: the binary's signal handler sets it ([`Interrupt::flag`]), the run's driver
/// and its connection loops poll it and stop the workers, and the run ends with
/// [`JobError::Interrupted`] after cleaning up as a failed run does.
#[derive(Clone, Debug, Default)]
pub struct Interrupt(Arc<AtomicUsize>);

impl Interrupt {
    /// The flag a signal handler stores the signal's number into (for example with
    /// `signal_hook::flag::register_usize`).
    pub fn flag(&self) -> Arc<AtomicUsize> {
        self.0.clone()
    }

    /// Asks the run to stop, as signal `signal` would.
    pub fn request(&self, signal: i32) {
        self.0.store(usize::try_from(signal).unwrap_or(usize::MAX), Ordering::SeqCst);
    }

    /// The signal that asked the run to stop, if one did.
    pub fn signal(&self) -> Option<i32> {
        match self.0.load(Ordering::SeqCst) {
            0 => None,
            n => Some(i32::try_from(n).unwrap_or(i32::MAX)),
        }
    }

    /// [`JobError::Interrupted`] once a signal asked the run to stop.
    pub(crate) fn error(&self) -> Option<JobError> {
        self.signal().map(|signal| JobError::Interrupted { signal })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signal_set_through_the_flag_names_it() {
        let interrupt = Interrupt::default();
        assert!(interrupt.error().is_none());
        interrupt.clone().flag().store(15, Ordering::SeqCst);
        let error = interrupt.error().expect("interrupted");
        assert_eq!(error.to_string(), "the run was interrupted by SIGTERM");
        interrupt.request(2);
        assert_eq!(interrupt.signal(), Some(2));
    }
}
