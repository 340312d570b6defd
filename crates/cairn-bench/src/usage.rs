//! Bad options, told apart from failures of the work itself.

use std::fmt;

/// An option value or combination a benchmark refuses before it touches the store: bad usage
/// (the command line's fault), which the binary reports with exit code 2 rather than 1.
///
/// Errors returned by [`crate::pe`] and [`crate::ycsb`] carry this type when they are bad
/// usage; find it with `anyhow::Error::downcast_ref::<UsageError>()`.
#[derive(Debug)]
pub struct UsageError(anyhow::Error);

impl UsageError {
    /// Marks `e` as bad usage.
    pub fn wrap(e: anyhow::Error) -> anyhow::Error {
        anyhow::Error::new(UsageError(e))
    }
}

impl fmt::Display for UsageError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // The whole chain: the option and why it is refused.
        write!(f, "{:#}", self.0)
    }
}

impl std::error::Error for UsageError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn usage_errors_are_found_and_read_as_their_cause() {
        let e = UsageError::wrap(anyhow::anyhow!("inner").context("--rows=0"));
        assert!(e.downcast_ref::<UsageError>().is_some());
        assert_eq!(format!("{e:#}"), "--rows=0: inner");
        assert!(anyhow::anyhow!("x").downcast_ref::<UsageError>().is_none());
    }
}
