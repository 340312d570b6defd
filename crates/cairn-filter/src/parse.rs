//! HBase's filter language (`ParseFilter`).
//!
//! The parser follows `ParseFilter`'s own algorithm byte for byte (an operator stack and a
//! filter stack, the same keyword and quote rules), so that it accepts exactly what HBase
//! accepts and builds the same tree, quirks included:
//! - `AND`/`OR` need a space or `)` before and a space or `(` after; `SKIP`/`WHILE` may also
//!   start the text or follow `(`. Keywords are upper case only.
//! - Precedence: `SKIP`/`WHILE` bind tighter than `AND`, which binds tighter than `OR`; a run of
//!   one operator becomes one list.
//! - A simple filter runs to the first `)` outside quotes; its name ends at `(` or a space.
//!   Arguments are separated by spaces or commas; `''` inside quotes is one `'`.
//! - The byte right after a closing quote is skipped, whatever it is (`'a'x` is `'a'`).
//! - Numbers are `-?[0-9]*` accumulated in a wrapping 64-bit integer that must stay
//!   non-negative (so `-` alone is 0, `-9223372036854775808` is rejected, and some 20-digit
//!   numbers wrap to positive values, as in HBase).
//! - An unclosed `(` is accepted; mixing operators inside one pair of parentheses where a
//!   later operator binds tighter (`(A OR B AND C)`) is rejected, as HBase's reduction loses
//!   the outer operator.
//!
//! Divergence: filters nested deeper than [`MAX_FILTER_DEPTH`] are rejected (HBase has no
//! limit), so that no input can exhaust the stack.
//!
//! The parse is split by job: [`lexer`] finds operator keywords, the extent of each simple
//! filter and its arguments; [`expression`] applies the operators with `ParseFilter`'s stacks
//! and precedence; [`args`] reads typed arguments; [`comparator`] reads compare operators and
//! comparators; [`filters`] builds each registered filter from its arguments.

mod args;
mod comparator;
mod expression;
mod filters;
mod lexer;

pub use expression::parse_filter;

/// The deepest nesting of lists and `SKIP`/`WHILE` wrappers [`parse_filter`] accepts.
pub const MAX_FILTER_DEPTH: usize = 100;

/// The filter names HBase 2.6's `ParseFilter` registers, all of which [`parse_filter`] builds.
pub const SUPPORTED_FILTERS: &[&str] = &[
    "KeyOnlyFilter",
    "FirstKeyOnlyFilter",
    "PrefixFilter",
    "ColumnPrefixFilter",
    "MultipleColumnPrefixFilter",
    "ColumnCountGetFilter",
    "PageFilter",
    "ColumnPaginationFilter",
    "InclusiveStopFilter",
    "TimestampsFilter",
    "RowFilter",
    "FamilyFilter",
    "QualifierFilter",
    "ValueFilter",
    "ColumnRangeFilter",
    "SingleColumnValueFilter",
    "SingleColumnValueExcludeFilter",
    "DependentColumnFilter",
    "ColumnValueFilter",
];

/// The spelling of the filter `text` parses to, for tests; panics if it does not parse.
#[cfg(test)]
fn spelled(text: &str) -> String {
    parse_filter(text)
        .unwrap_or_else(|e| panic!("{text:?}: {e}"))
        .filter_string()
        .expect("parsed filters have a spelling")
}

/// The error `text` gives, for tests; panics if it parses.
#[cfg(test)]
fn err(text: &str) -> crate::FilterError {
    match parse_filter(text) {
        Ok(f) => panic!("{text:?} parsed as {f:?}"),
        Err(e) => e,
    }
}
