//! Building each filter `ParseFilter` registers from its arguments: the checks and
//! constructor calls of the filters' `createFilterFromArguments`.

use super::args::Args;
use super::lexer::filter_arguments;
use super::SUPPORTED_FILTERS;
use crate::{
    ColumnCountGetFilter, ColumnPaginationFilter, ColumnPrefixFilter, ColumnRangeFilter,
    ColumnValueFilter, DependentColumnFilter, FamilyFilter, Filter, FilterError,
    FirstKeyOnlyFilter, InclusiveStopFilter, KeyOnlyFilter, MultipleColumnPrefixFilter, PageFilter,
    PrefixFilter, QualifierFilter, RowFilter, SingleColumnValueExcludeFilter,
    SingleColumnValueFilter, TimestampsFilter, ValueFilter,
};

/// `parseSimpleFilterExpression` for the bytes `expr` found at `base`.
pub(super) fn parse_simple_expression(
    expr: &[u8],
    base: usize,
) -> Result<Box<dyn Filter>, FilterError> {
    let name_end = expr.iter().position(|&c| c == b'(' || c == b' ');
    let name_end = match name_end {
        Some(n) if n > 0 => n,
        _ => {
            return Err(FilterError::syntax(
                base,
                "expected a filter name followed by '('",
            ))
        }
    };
    let args = filter_arguments(expr, base)?;
    let name = String::from_utf8_lossy(&expr[..name_end]);
    let Some(&name) = SUPPORTED_FILTERS.iter().find(|n| **n == name) else {
        return Err(FilterError::UnknownFilter {
            offset: base,
            name: name.into_owned(),
        });
    };
    Args {
        filter: name,
        offset: base,
        args,
    }
    .build()
}

impl Args {
    /// `createFilterFromArguments` of the filter named `self.filter`.
    fn build(self) -> Result<Box<dyn Filter>, FilterError> {
        let n = self.args.len();
        Ok(match self.filter {
            "KeyOnlyFilter" => {
                self.count(n <= 1, "0 or 1")?;
                Box::new(KeyOnlyFilter::new(n == 1 && self.boolean(0)?))
            }
            "FirstKeyOnlyFilter" => {
                self.count(n == 0, "0")?;
                Box::new(FirstKeyOnlyFilter::new())
            }
            "PrefixFilter" => {
                self.count(n == 1, "1")?;
                Box::new(PrefixFilter::new(self.quoted(0)?))
            }
            "ColumnPrefixFilter" => {
                self.count(n == 1, "1")?;
                Box::new(ColumnPrefixFilter::new(self.quoted(0)?))
            }
            "InclusiveStopFilter" => {
                self.count(n == 1, "1")?;
                Box::new(InclusiveStopFilter::new(self.quoted(0)?))
            }
            "MultipleColumnPrefixFilter" => {
                let prefixes = (0..n)
                    .map(|i| self.quoted(i))
                    .collect::<Result<Vec<_>, _>>()?;
                Box::new(
                    MultipleColumnPrefixFilter::new(prefixes)
                        .map_err(|e| self.invalid(n.saturating_sub(1), e))?,
                )
            }
            "ColumnCountGetFilter" => {
                self.count(n == 1, "1")?;
                Box::new(ColumnCountGetFilter::new(self.int(0)?).map_err(|e| self.invalid(0, e))?)
            }
            "PageFilter" => {
                self.count(n == 1, "1")?;
                Box::new(PageFilter::new(self.long(0)?).map_err(|e| self.invalid(0, e))?)
            }
            "ColumnPaginationFilter" => {
                self.count(n == 2, "2")?;
                let (limit, offset) = (self.int(0)?, self.int(1)?);
                Box::new(
                    ColumnPaginationFilter::new(limit, offset)
                        .map_err(|e| self.invalid(if limit < 0 { 0 } else { 1 }, e))?,
                )
            }
            "TimestampsFilter" => {
                let mut timestamps = Vec::with_capacity(n);
                for i in 0..n {
                    let ts = self.long(i)?;
                    if ts < 0 {
                        return Err(self.bad(i, "timestamps must not be negative"));
                    }
                    timestamps.push(ts);
                }
                Box::new(TimestampsFilter::new(timestamps, false).map_err(|e| self.invalid(0, e))?)
            }
            "RowFilter" | "FamilyFilter" | "QualifierFilter" | "ValueFilter" => {
                self.count(n == 2, "2")?;
                let (op, comparator) = self.comparison(0, true)?;
                match self.filter {
                    "RowFilter" => Box::new(RowFilter::new(op, comparator)) as Box<dyn Filter>,
                    "FamilyFilter" => Box::new(FamilyFilter::new(op, comparator)),
                    "QualifierFilter" => Box::new(QualifierFilter::new(op, comparator)),
                    _ => Box::new(ValueFilter::new(op, comparator)),
                }
            }
            "ColumnRangeFilter" => {
                self.count(n == 4, "4")?;
                let min = self.quoted(0)?;
                let min_inclusive = self.boolean(1)?;
                let max = self.quoted(2)?;
                let max_inclusive = self.boolean(3)?;
                let bound = |b: Vec<u8>| (!b.is_empty()).then_some(b);
                Box::new(ColumnRangeFilter::new(
                    bound(min),
                    min_inclusive,
                    bound(max),
                    max_inclusive,
                ))
            }
            "SingleColumnValueFilter" | "SingleColumnValueExcludeFilter" => {
                self.count(n == 4 || n == 6, "4 or 6")?;
                let family = self.quoted(0)?;
                let qualifier = self.quoted(1)?;
                let (op, comparator) = self.comparison(2, true)?;
                let mut scvf = SingleColumnValueFilter::new(family, qualifier, op, comparator)
                    .map_err(|e| self.invalid(2, e))?;
                if n == 6 {
                    scvf = scvf
                        .with_filter_if_missing(self.boolean(4)?)
                        .with_latest_version_only(self.boolean(5)?);
                }
                if self.filter == "SingleColumnValueFilter" {
                    Box::new(scvf)
                } else {
                    Box::new(SingleColumnValueExcludeFilter::new(scvf))
                }
            }
            "DependentColumnFilter" => {
                self.count(matches!(n, 2 | 3 | 5), "2, 3 or 5")?;
                let family = self.quoted(0)?;
                let qualifier = self.quoted(1)?;
                let drop = n >= 3 && self.boolean(2)?;
                let mut f = DependentColumnFilter::new(family, qualifier, drop);
                if n == 5 {
                    let (op, comparator) = self.comparison(3, false)?;
                    f = f.with_comparison(op, comparator);
                }
                Box::new(f)
            }
            "ColumnValueFilter" => {
                self.count(n == 4, "4")?;
                let family = self.quoted(0)?;
                let qualifier = self.quoted(1)?;
                let (op, comparator) = self.comparison(2, true)?;
                Box::new(ColumnValueFilter::new(family, qualifier, op, comparator))
            }
            other => {
                return Err(FilterError::UnknownFilter {
                    offset: self.offset,
                    name: other.to_owned(),
                })
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use crate::parse::{err, spelled, SUPPORTED_FILTERS};
    use crate::FilterError;

    #[test]
    fn every_registered_filter_parses() {
        let texts = [
            "KeyOnlyFilter()",
            "FirstKeyOnlyFilter()",
            "PrefixFilter('p')",
            "ColumnPrefixFilter('p')",
            "MultipleColumnPrefixFilter('a', 'b')",
            "ColumnCountGetFilter(4)",
            "PageFilter(10)",
            "ColumnPaginationFilter(3, 2)",
            "InclusiveStopFilter('z')",
            "TimestampsFilter(5, 1, 3)",
            "RowFilter(>=, 'binaryprefix:r')",
            "FamilyFilter(=, 'binary:f')",
            "QualifierFilter(!=, 'substring:x')",
            "ValueFilter(=, 'regexstring:v+')",
            "ColumnRangeFilter('a', true, '', false)",
            "SingleColumnValueFilter('f', 'q', =, 'binary:v')",
            "SingleColumnValueFilter('f', 'q', =, 'binary:v', true, false)",
            "SingleColumnValueExcludeFilter('f', 'q', <, 'binary:v', false, false)",
            "DependentColumnFilter('f', 'q', true)",
            "DependentColumnFilter('f', 'q', false, <, 'regexstring:x')",
            "ColumnValueFilter('f', 'q', >, 'binary:v')",
        ];
        for t in texts {
            let s = spelled(t);
            assert_eq!(spelled(&s), s, "{t}");
        }
        assert_eq!(
            spelled("TimestampsFilter(5, 1, 3)"),
            "TimestampsFilter(1, 3, 5)"
        );
        assert_eq!(
            spelled("DependentColumnFilter('f', 'q')"),
            "DependentColumnFilter('f', 'q', false)"
        );
        assert_eq!(spelled("TimestampsFilter()"), "TimestampsFilter()");
        for name in SUPPORTED_FILTERS {
            assert!(
                texts.iter().any(|t| t.starts_with(&format!("{name}("))),
                "{name}"
            );
        }
    }

    #[test]
    fn errors_say_what_and_where() {
        assert_eq!(
            err("PrefixFilter('a') AND NoSuchFilter(1)"),
            FilterError::UnknownFilter {
                offset: 22,
                name: "NoSuchFilter".into()
            }
        );
        assert_eq!(
            err("KeyOnlyFilter() OR PrefixFilter('a', 'b')"),
            FilterError::ArgumentCount {
                offset: 19,
                filter: "PrefixFilter",
                expected: "1",
                got: 2
            }
        );
        assert!(matches!(
            err("SingleColumnValueFilter('f', 'q', =, 'binary:v', true)"),
            FilterError::ArgumentCount { got: 5, .. }
        ));
        assert!(matches!(
            err("MultipleColumnPrefixFilter('a', 'a')"),
            FilterError::Argument { .. }
        ));
        assert!(matches!(
            err("TimestampsFilter(1, -2)"),
            FilterError::Argument { index: 2, .. }
        ));
        assert!(matches!(err(""), FilterError::Syntax { .. }));
        assert!(matches!(err("   "), FilterError::Syntax { .. }));
        assert!(matches!(err("()"), FilterError::Syntax { .. }));
        assert!(matches!(err(")"), FilterError::Syntax { offset: 0, .. }));
        assert!(matches!(
            err("PrefixFilter('a') AND"),
            FilterError::Syntax { .. }
        ));
        assert!(matches!(
            err("PrefixFilter('a') AND "),
            FilterError::Syntax { .. }
        ));
        assert!(matches!(
            err("PrefixFilter('a') PrefixFilter('b')"),
            FilterError::Syntax { .. }
        ));
        assert!(matches!(err("SKIP "), FilterError::Syntax { .. }));
        assert!(matches!(
            err("PrefixFilter"),
            FilterError::Syntax { offset: 0, .. }
        ));
        assert!(matches!(
            err("Prefix Filter('a')"),
            FilterError::UnknownFilter { .. }
        ));
        let e = err("RowFilter(=, 'nope:x')").to_string();
        assert!(e.contains("byte 13") && e.contains("nope"), "{e}");
    }
}
