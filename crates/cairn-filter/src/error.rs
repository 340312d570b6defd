//! Errors from building a filter or parsing the filter language.

/// Why a filter string or a filter's arguments were rejected. Offsets are byte offsets into
/// the filter string (UTF-8), counted from 0.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterError {
    /// The text is not a well-formed expression (HBase: "Mismatched parenthesis", "Incorrect
    /// Filter String", "an AND needs two filters", ...).
    #[error("filter string, byte {offset}: {message}")]
    Syntax {
        /// Where the problem was found.
        offset: usize,
        /// What is wrong.
        message: String,
    },
    /// A simple filter whose name is not one HBase registers.
    #[error("filter string, byte {offset}: filter name {name:?} is not supported")]
    UnknownFilter {
        /// Where the name starts.
        offset: usize,
        /// The name as written.
        name: String,
    },
    /// A filter given a number of arguments it does not take.
    #[error("filter string, byte {offset}: {filter} expects {expected} argument(s) but got {got}")]
    ArgumentCount {
        /// Where the filter starts.
        offset: usize,
        /// The filter's name.
        filter: &'static str,
        /// The counts it accepts, in words.
        expected: &'static str,
        /// The count it was given.
        got: usize,
    },
    /// An argument that is not what the filter takes at that position.
    #[error("filter string, byte {offset}: argument {index} of {filter} ({token:?}): {message}")]
    Argument {
        /// Where the argument starts.
        offset: usize,
        /// The filter's name.
        filter: &'static str,
        /// The argument's position, from 1.
        index: usize,
        /// The argument as written (quoted arguments keep their quotes).
        token: String,
        /// What is wrong with it.
        message: String,
    },
    /// Filters nested deeper than [`crate::MAX_FILTER_DEPTH`].
    #[error("filter string, byte {offset}: filters nested deeper than {limit} levels")]
    TooDeep {
        /// Where the too-deep wrapper or list was closed.
        offset: usize,
        /// The limit.
        limit: usize,
    },
    /// A filter or comparator built from Rust with arguments HBase rejects.
    #[error("{filter}: {message}")]
    Invalid {
        /// The filter or comparator.
        filter: &'static str,
        /// What is wrong.
        message: String,
    },
}

impl FilterError {
    pub(crate) fn invalid(filter: &'static str, message: impl Into<String>) -> FilterError {
        FilterError::Invalid {
            filter,
            message: message.into(),
        }
    }

    pub(crate) fn syntax(offset: usize, message: impl Into<String>) -> FilterError {
        FilterError::Syntax {
            offset,
            message: message.into(),
        }
    }
}
