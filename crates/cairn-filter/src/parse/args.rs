//! One simple filter's arguments and the typed readers `ParseFilter` applies to them:
//! quoted strings, numbers (with HBase's wrapping accumulator) and booleans.

use super::lexer::Arg;
use crate::FilterError;

/// One simple filter's arguments, with the checks each `createFilterFromArguments` makes.
pub(super) struct Args {
    /// The filter's registered name, one of `SUPPORTED_FILTERS`.
    pub(super) filter: &'static str,
    /// Where the filter starts in the filter string, for errors.
    pub(super) offset: usize,
    /// The arguments in order.
    pub(super) args: Vec<Arg>,
}

impl Args {
    /// Fails with the expected count unless `ok`.
    pub(super) fn count(&self, ok: bool, expected: &'static str) -> Result<(), FilterError> {
        if ok {
            Ok(())
        } else {
            Err(FilterError::ArgumentCount {
                offset: self.offset,
                filter: self.filter,
                expected,
                got: self.args.len(),
            })
        }
    }

    /// An error about argument `index` (0-based; reported 1-based, as written).
    pub(super) fn bad(&self, index: usize, message: impl Into<String>) -> FilterError {
        let arg = &self.args[index];
        FilterError::Argument {
            offset: arg.offset,
            filter: self.filter,
            index: index + 1,
            token: String::from_utf8_lossy(&arg.bytes).into_owned(),
            message: message.into(),
        }
    }

    /// Re-labels a constructor's complaint as one about the filter string.
    pub(super) fn invalid(&self, index: usize, e: FilterError) -> FilterError {
        match e {
            FilterError::Invalid { message, .. } => self.bad(index, message),
            other => other,
        }
    }

    /// `removeQuotesFromByteArray`.
    pub(super) fn quoted(&self, index: usize) -> Result<Vec<u8>, FilterError> {
        let b = &self.args[index].bytes;
        if b.len() < 2 || b[0] != b'\'' || b[b.len() - 1] != b'\'' {
            return Err(self.bad(index, "expected a quoted string"));
        }
        Ok(b[1..b.len() - 1].to_vec())
    }

    /// `convertByteArrayToLong`, overflow behaviour included.
    pub(super) fn long(&self, index: usize) -> Result<i64, FilterError> {
        let b = &self.args[index].bytes;
        let (negative, digits) = match b.split_first() {
            Some((b'-', rest)) => (true, rest),
            Some(_) => (false, &b[..]),
            None => return Err(self.bad(index, "expected a number")),
        };
        let mut result: i64 = 0;
        for &d in digits {
            if !d.is_ascii_digit() {
                return Err(self.bad(
                    index,
                    "expected a number: only digits, after an optional '-'",
                ));
            }
            result = result.wrapping_mul(10).wrapping_add(i64::from(d - b'0'));
            if result < 0 {
                return Err(self.bad(index, "number too large for a 64-bit integer"));
            }
        }
        Ok(if negative { -result } else { result })
    }

    /// `convertByteArrayToInt`.
    pub(super) fn int(&self, index: usize) -> Result<i32, FilterError> {
        let v = self.long(index)?;
        i32::try_from(v).map_err(|_| self.bad(index, "number out of the 32-bit integer range"))
    }

    /// `convertByteArrayToBoolean`: `true` or `false` in any case.
    pub(super) fn boolean(&self, index: usize) -> Result<bool, FilterError> {
        let b = &self.args[index].bytes;
        if b.eq_ignore_ascii_case(b"true") {
            Ok(true)
        } else if b.eq_ignore_ascii_case(b"false") {
            Ok(false)
        } else {
            Err(self.bad(index, "expected true or false"))
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{err, spelled};
    use crate::FilterError;

    #[test]
    fn numbers_and_booleans() {
        assert_eq!(spelled("PageFilter(-)"), "PageFilter(0)");
        assert_eq!(spelled("PageFilter(007)"), "PageFilter(7)");
        assert_eq!(
            spelled("PageFilter(9223372036854775807)"),
            "PageFilter(9223372036854775807)"
        );
        assert!(matches!(
            err("PageFilter(9223372036854775808)"),
            FilterError::Argument { .. }
        ));
        // HBase's accumulator wraps: 2e19 becomes 2e19 - 2^64.
        assert_eq!(
            spelled("PageFilter(20000000000000000000)"),
            "PageFilter(1553255926290448384)"
        );
        assert!(matches!(
            err("PageFilter(-1)"),
            FilterError::Argument { .. }
        ));
        assert!(matches!(
            err("PageFilter(1x)"),
            FilterError::Argument { .. }
        ));
        assert!(matches!(
            err("PageFilter('1')"),
            FilterError::Argument { .. }
        ));
        assert_eq!(spelled("KeyOnlyFilter(TrUe)"), "KeyOnlyFilter(true)");
        assert!(matches!(
            err("KeyOnlyFilter(yes)"),
            FilterError::Argument { .. }
        ));
        assert!(matches!(
            err("ColumnCountGetFilter(2147483648)"),
            FilterError::Argument { .. }
        ));
    }
}
