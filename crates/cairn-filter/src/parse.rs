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

use crate::{
    ColumnCountGetFilter, ColumnPaginationFilter, ColumnPrefixFilter, ColumnRangeFilter,
    ColumnValueFilter, Comparator, CompareOp, DependentColumnFilter, FamilyFilter, Filter,
    FilterError, FilterList, FirstKeyOnlyFilter, InclusiveStopFilter, KeyOnlyFilter,
    MultipleColumnPrefixFilter, Operator, PageFilter, PrefixFilter, QualifierFilter, RowFilter,
    SingleColumnValueExcludeFilter, SingleColumnValueFilter, SkipFilter, TimestampsFilter,
    ValueFilter, WhileMatchFilter,
};

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

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Op {
    LParen,
    And,
    Or,
    Skip,
    While,
}

impl Op {
    /// `ParseFilter`'s precedence: lower binds tighter.
    fn precedence(self) -> u8 {
        match self {
            Op::Skip | Op::While => 1,
            Op::And => 2,
            Op::Or => 3,
            Op::LParen => u8::MAX,
        }
    }
}

struct Node {
    filter: Box<dyn Filter>,
    depth: usize,
}

/// Parses HBase filter-language text into a filter tree, exactly as `ParseFilter` does.
///
/// ```
/// let f = cairn_filter::parse_filter(
///     "PrefixFilter('ab') AND (QualifierFilter(>=, 'binary:q') OR ValueFilter(!=, 'substring:X'))",
/// ).unwrap();
/// assert!(f.filter_string().is_some());
/// assert!(cairn_filter::parse_filter("PrefixFilter('ab'").is_err());
/// // HBase 2.6.1 itself rejects this one (an EmptyStackException): inside parentheses, a
/// // tighter operator after a looser one loses the looser one.
/// assert!(cairn_filter::parse_filter(
///     "PrefixFilter('ab') AND (QualifierFilter(>=, 'binary:q') OR SKIP ValueFilter(!=, 'substring:X'))",
/// ).is_err());
/// ```
pub fn parse_filter(text: &str) -> Result<Box<dyn Filter>, FilterError> {
    let b = text.as_bytes();
    let mut ops: Vec<(Op, usize)> = Vec::new();
    let mut filters: Vec<Node> = Vec::new();
    let mut i = 0;
    while i < b.len() {
        if b[i] == b'(' {
            ops.push((Op::LParen, i));
        } else if b[i] == b' ' || b[i] == b'\t' {
            // Between tokens.
        } else if let Some((op, len)) = keyword_at(b, i) {
            reduce(&mut ops, &mut filters, op, i)?;
            ops.push((op, i));
            i += len - 1;
        } else if b[i] == b')' {
            close_paren(&mut ops, &mut filters, i)?;
        } else {
            let end = simple_expression_end(b, i)?;
            let filter = parse_simple_expression(&b[i..=end], i)?;
            filters.push(Node { filter, depth: 1 });
            i = end;
        }
        i += 1;
    }
    while !ops.is_empty() {
        let node = pop_arguments(&mut ops, &mut filters, b.len())?;
        filters.push(node);
    }
    let Some(node) = filters.pop() else {
        return Err(FilterError::syntax(
            b.len(),
            "no filter in the filter string",
        ));
    };
    if !filters.is_empty() {
        return Err(FilterError::syntax(
            b.len(),
            format!("{} filters are not joined by AND or OR", filters.len() + 1),
        ));
    }
    Ok(node.filter)
}

/// `checkForOr` / `checkForAnd` / `checkForSkip` / `checkForWhile`, in that order.
fn keyword_at(b: &[u8], i: usize) -> Option<(Op, usize)> {
    let before = |allowed: &[u8], may_start: bool| {
        if i == 0 {
            may_start
        } else {
            allowed.contains(&b[i - 1])
        }
    };
    let after = |len: usize| b.get(i + len).is_some_and(|c| *c == b' ' || *c == b'(');
    let word = |w: &[u8]| b[i..].starts_with(w);
    if word(b"OR") && before(b" )", false) && after(2) {
        return Some((Op::Or, 2));
    }
    if word(b"AND") && before(b" )", false) && after(3) {
        return Some((Op::And, 3));
    }
    if word(b"SKIP") && before(b" )(", true) && after(4) {
        return Some((Op::Skip, 4));
    }
    if word(b"WHILE") && before(b" )(", true) && after(5) {
        return Some((Op::While, 5));
    }
    None
}

/// `ParseFilter.reduce`: applies the stacked operators that bind tighter than `op`.
fn reduce(
    ops: &mut Vec<(Op, usize)>,
    filters: &mut Vec<Node>,
    op: Op,
    at: usize,
) -> Result<(), FilterError> {
    while let Some(&(top, _)) = ops.last() {
        if top == Op::LParen || top.precedence() >= op.precedence() {
            break;
        }
        let node = pop_arguments(ops, filters, at)?;
        filters.push(node);
    }
    Ok(())
}

/// The `)` branch of `parseFilterString`. Like HBase, it pops one operator per reduction in
/// addition to what the reduction consumed.
fn close_paren(
    ops: &mut Vec<(Op, usize)>,
    filters: &mut Vec<Node>,
    at: usize,
) -> Result<(), FilterError> {
    let mismatched = || FilterError::syntax(at, "mismatched parenthesis: no '(' for this ')'");
    let mut top = ops.last().ok_or_else(mismatched)?.0;
    if top == Op::LParen {
        ops.pop();
        return Ok(());
    }
    while top != Op::LParen {
        let node = pop_arguments(ops, filters, at)?;
        filters.push(node);
        top = ops.pop().ok_or_else(mismatched)?.0;
    }
    Ok(())
}

/// `ParseFilter.popArguments`: applies the operator on top of the stack.
fn pop_arguments(
    ops: &mut Vec<(Op, usize)>,
    filters: &mut Vec<Node>,
    at: usize,
) -> Result<Node, FilterError> {
    let Some(&(top, top_at)) = ops.last() else {
        return Err(FilterError::syntax(
            at,
            "mismatched parenthesis: an operator inside parentheses lost its operands",
        ));
    };
    let wrap_depth = |depth: usize| {
        if depth > MAX_FILTER_DEPTH {
            Err(FilterError::TooDeep {
                offset: top_at,
                limit: MAX_FILTER_DEPTH,
            })
        } else {
            Ok(depth)
        }
    };
    match top {
        Op::And | Op::Or => {
            let (name, operator) = if top == Op::And {
                ("AND", Operator::MustPassAll)
            } else {
                ("OR", Operator::MustPassOne)
            };
            let missing = |offset| {
                FilterError::syntax(offset, format!("an {name} needs a filter on each side"))
            };
            let mut nodes = Vec::new();
            while let Some(&(op, op_at)) = ops.last() {
                if op != top {
                    break;
                }
                nodes.push(filters.pop().ok_or_else(|| missing(op_at))?);
                ops.pop();
            }
            nodes.push(filters.pop().ok_or_else(|| missing(top_at))?);
            nodes.reverse();
            let depth = wrap_depth(1 + nodes.iter().map(|n| n.depth).max().unwrap_or(0))?;
            let list = FilterList::new(operator, nodes.into_iter().map(|n| n.filter).collect());
            Ok(Node {
                filter: Box::new(list),
                depth,
            })
        }
        Op::Skip | Op::While => {
            let name = if top == Op::Skip { "SKIP" } else { "WHILE" };
            let node = filters.pop().ok_or_else(|| {
                FilterError::syntax(top_at, format!("{name} must be followed by a filter"))
            })?;
            ops.pop();
            let depth = wrap_depth(node.depth + 1)?;
            let filter: Box<dyn Filter> = if top == Op::Skip {
                Box::new(SkipFilter::new(node.filter))
            } else {
                Box::new(WhileMatchFilter::new(node.filter))
            };
            Ok(Node { filter, depth })
        }
        Op::LParen => {
            let node = filters
                .pop()
                .ok_or_else(|| FilterError::syntax(top_at, "parentheses with no filter inside"))?;
            ops.pop();
            Ok(node)
        }
    }
}

/// `isQuoteUnescaped`: a quote not followed by another quote.
fn quote_unescaped(b: &[u8], i: usize) -> bool {
    i + 1 == b.len() || b[i + 1] != b'\''
}

/// `extractFilterSimpleExpression`: the index of the `)` that ends the simple filter at
/// `start`.
fn simple_expression_end(b: &[u8], start: usize) -> Result<usize, FilterError> {
    let mut in_quotes = false;
    let mut j = start;
    while j < b.len() {
        if b[j] == b'\'' {
            if quote_unescaped(b, j) {
                in_quotes = !in_quotes;
            } else {
                j += 1;
            }
        }
        if b[j] == b')' && !in_quotes {
            return Ok(j);
        }
        j += 1;
    }
    Err(FilterError::syntax(
        start,
        if in_quotes {
            "unterminated quoted string in this filter"
        } else {
            "filter is not closed with ')'"
        },
    ))
}

/// An argument as written (quoted ones keep their quotes, `''` already unescaped) and where
/// it starts.
struct Arg {
    bytes: Vec<u8>,
    offset: usize,
}

/// `getFilterArguments`.
fn filter_arguments(expr: &[u8], base: usize) -> Result<Vec<Arg>, FilterError> {
    let Some(open) = expr.iter().position(|&c| c == b'(') else {
        return Err(FilterError::syntax(
            base,
            "filter has no argument list: expected '(' after the name",
        ));
    };
    let is_separator = |c: u8| c == b' ' || c == b',' || c == b')';
    let mut args = Vec::new();
    let mut i = open + 1;
    while i < expr.len() {
        let c = expr[i];
        if is_separator(c) {
            i += 1;
            continue;
        }
        let start = i;
        if c == b'\'' {
            let mut j = start + 1;
            while j < expr.len() {
                if expr[j] == b'\'' {
                    if quote_unescaped(expr, j) {
                        args.push(Arg {
                            bytes: unescape_quoted(expr, start, j),
                            offset: base + start,
                        });
                        i = j + 1;
                        break;
                    }
                    j += 1;
                } else if j == expr.len() - 1 {
                    return Err(FilterError::syntax(
                        base + start,
                        "unterminated quoted argument",
                    ));
                }
                j += 1;
            }
        } else {
            let mut j = start;
            while j < expr.len() {
                if is_separator(expr[j]) {
                    args.push(Arg {
                        bytes: expr[start..j].to_vec(),
                        offset: base + start,
                    });
                    i = j;
                    break;
                } else if j == expr.len() - 1 {
                    return Err(FilterError::syntax(base + start, "unterminated argument"));
                }
                j += 1;
            }
        }
        // HBase's loop increment: after a quoted argument this skips the byte after the quote.
        i += 1;
    }
    Ok(args)
}

/// `createUnescapdArgument`: keeps the outer quotes, turns `''` into `'`.
fn unescape_quoted(expr: &[u8], start: usize, end: usize) -> Vec<u8> {
    let mut out = Vec::with_capacity(end - start + 1);
    out.push(b'\'');
    let mut i = start + 1;
    while i < end {
        if expr[i] == b'\'' && i != end - 1 && expr[i + 1] == b'\'' {
            out.push(b'\'');
            i += 2;
        } else {
            out.push(expr[i]);
            i += 1;
        }
    }
    out.push(b'\'');
    out
}

/// `parseSimpleFilterExpression` for the bytes `expr` found at `base`.
fn parse_simple_expression(expr: &[u8], base: usize) -> Result<Box<dyn Filter>, FilterError> {
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

/// One simple filter's arguments, with the checks each `createFilterFromArguments` makes.
struct Args {
    filter: &'static str,
    offset: usize,
    args: Vec<Arg>,
}

impl Args {
    fn count(&self, ok: bool, expected: &'static str) -> Result<(), FilterError> {
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

    fn bad(&self, index: usize, message: impl Into<String>) -> FilterError {
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
    fn invalid(&self, index: usize, e: FilterError) -> FilterError {
        match e {
            FilterError::Invalid { message, .. } => self.bad(index, message),
            other => other,
        }
    }

    /// `removeQuotesFromByteArray`.
    fn quoted(&self, index: usize) -> Result<Vec<u8>, FilterError> {
        let b = &self.args[index].bytes;
        if b.len() < 2 || b[0] != b'\'' || b[b.len() - 1] != b'\'' {
            return Err(self.bad(index, "expected a quoted string"));
        }
        Ok(b[1..b.len() - 1].to_vec())
    }

    /// `convertByteArrayToLong`, overflow behaviour included.
    fn long(&self, index: usize) -> Result<i64, FilterError> {
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
    fn int(&self, index: usize) -> Result<i32, FilterError> {
        let v = self.long(index)?;
        i32::try_from(v).map_err(|_| self.bad(index, "number out of the 32-bit integer range"))
    }

    /// `convertByteArrayToBoolean`: `true` or `false` in any case.
    fn boolean(&self, index: usize) -> Result<bool, FilterError> {
        let b = &self.args[index].bytes;
        if b.eq_ignore_ascii_case(b"true") {
            Ok(true)
        } else if b.eq_ignore_ascii_case(b"false") {
            Ok(false)
        } else {
            Err(self.bad(index, "expected true or false"))
        }
    }

    fn op(&self, index: usize) -> Result<CompareOp, FilterError> {
        CompareOp::from_token(&self.args[index].bytes)
            .ok_or_else(|| self.bad(index, "expected a compare operator: <, <=, =, !=, >=, >"))
    }

    /// `createComparator(removeQuotesFromByteArray(arg))`.
    fn comparator(&self, index: usize) -> Result<Comparator, FilterError> {
        let text = self.quoted(index)?;
        let Some(colon) = text.iter().position(|&c| c == b':') else {
            return Err(self.bad(
                index,
                "expected a comparator 'type:value' (binary, binaryprefix, regexstring, regexstringnocase, substring)",
            ));
        };
        let value = &text[colon + 1..];
        Ok(match &text[..colon] {
            b"binary" => Comparator::binary(value),
            b"binaryprefix" => Comparator::binary_prefix(value),
            b"substring" => Comparator::substring(&String::from_utf8_lossy(value)),
            kind @ (b"regexstring" | b"regexstringnocase") => {
                Comparator::regex_string(&String::from_utf8_lossy(value), kind.len() > 11)
                    .map_err(|e| self.invalid(index, e))?
            }
            other => {
                return Err(self.bad(
                    index,
                    format!(
                        "unknown comparator type {:?} (binary, binaryprefix, regexstring, regexstringnocase, substring)",
                        String::from_utf8_lossy(other)
                    ),
                ))
            }
        })
    }

    /// `op` and comparator as `CompareFilter.extractArguments` and the SCVF parser check them.
    fn comparison(
        &self,
        op_index: usize,
        check_matching: bool,
    ) -> Result<(CompareOp, Comparator), FilterError> {
        let op = self.op(op_index)?;
        let comparator = self.comparator(op_index + 1)?;
        if check_matching {
            crate::row::check_matching_op(self.filter, op, &comparator)
                .map_err(|e| self.invalid(op_index, e))?;
        }
        Ok((op, comparator))
    }

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
    use super::*;

    fn spelled(text: &str) -> String {
        parse_filter(text)
            .unwrap_or_else(|e| panic!("{text:?}: {e}"))
            .filter_string()
            .expect("parsed filters have a spelling")
    }

    fn err(text: &str) -> FilterError {
        match parse_filter(text) {
            Ok(f) => panic!("{text:?} parsed as {f:?}"),
            Err(e) => e,
        }
    }

    #[test]
    fn precedence_and_lists() {
        assert_eq!(
            spelled("PrefixFilter('a') OR PrefixFilter('b') AND PrefixFilter('c')"),
            "(PrefixFilter('a') OR (PrefixFilter('b') AND PrefixFilter('c')))"
        );
        assert_eq!(
            spelled("PrefixFilter('a') AND PrefixFilter('b') OR PrefixFilter('c')"),
            "((PrefixFilter('a') AND PrefixFilter('b')) OR PrefixFilter('c'))"
        );
        assert_eq!(
            spelled("KeyOnlyFilter() AND FirstKeyOnlyFilter() AND PageFilter(3)"),
            "(KeyOnlyFilter() AND FirstKeyOnlyFilter() AND PageFilter(3))"
        );
        assert_eq!(
            spelled("(KeyOnlyFilter() AND FirstKeyOnlyFilter()) AND PageFilter(3)"),
            "((KeyOnlyFilter() AND FirstKeyOnlyFilter()) AND PageFilter(3))"
        );
        assert_eq!(
            spelled("SKIP ValueFilter(=, 'binary:x') AND WHILE RowFilter(<, 'binary:m')"),
            "((SKIP ValueFilter(=, 'binary:x')) AND (WHILE RowFilter(<, 'binary:m')))"
        );
        assert_eq!(
            spelled("SKIP(PrefixFilter('a') OR PrefixFilter('b'))"),
            "SKIP (PrefixFilter('a') OR PrefixFilter('b'))"
        );
        assert_eq!(
            spelled("SKIP SKIP PrefixFilter('a')"),
            "SKIP (SKIP PrefixFilter('a'))"
        );
        // ...which spelling HBase's parser also takes inside parentheses, unlike the bare one.
        assert!(parse_filter("(SKIP SKIP PrefixFilter('a'))").is_err());
        assert!(parse_filter("(SKIP (SKIP PrefixFilter('a')))").is_ok());
        assert_eq!(spelled("\t ((PrefixFilter('a')))  "), "PrefixFilter('a')");
        // An unclosed '(' is accepted, as by HBase.
        assert_eq!(spelled("(PrefixFilter('a')"), "PrefixFilter('a')");
        assert_eq!(
            spelled("PrefixFilter('a')AND(PrefixFilter('b'))"),
            "(PrefixFilter('a') AND PrefixFilter('b'))"
        );
    }

    #[test]
    fn hbase_reduction_quirks_are_kept() {
        // A tighter operator after a looser one inside parentheses loses the looser one in
        // HBase's ')' handling, which then runs out of '('.
        assert!(matches!(
            err("(PrefixFilter('a') OR PrefixFilter('b') AND PrefixFilter('c'))"),
            FilterError::Syntax { .. }
        ));
        assert!(matches!(
            err("(PrefixFilter('a') AND SKIP PrefixFilter('c'))"),
            FilterError::Syntax { .. }
        ));
        // Keywords need their neighbours: "ANDPrefixFilter" is a filter name.
        assert!(matches!(
            err("PrefixFilter('a') ANDPrefixFilter('b')"),
            FilterError::UnknownFilter { offset: 18, .. }
        ));
        // Lower case is a name, not an operator.
        assert!(matches!(
            err("PrefixFilter('a') and PrefixFilter('b')"),
            FilterError::UnknownFilter { .. }
        ));
    }

    #[test]
    fn quoting() {
        assert_eq!(spelled("PrefixFilter('it''s')"), "PrefixFilter('it''s')");
        let f = parse_filter("PrefixFilter('a''b)c')").unwrap();
        assert_eq!(f.filter_string().unwrap(), "PrefixFilter('a''b)c')");
        assert_eq!(spelled("PrefixFilter('')"), "PrefixFilter('')");
        // The byte after a closing quote is skipped whatever it is.
        assert_eq!(spelled("PrefixFilter('a'x)"), "PrefixFilter('a')");
        assert_eq!(spelled("PrefixFilter ('a')"), "PrefixFilter('a')");
        assert!(matches!(
            err("PrefixFilter('a)"),
            FilterError::Syntax { offset: 0, .. }
        ));
        assert!(matches!(
            err("PrefixFilter(a)"),
            FilterError::Argument {
                offset: 13,
                index: 1,
                ..
            }
        ));
    }

    #[test]
    fn numbers_booleans_operators_comparators() {
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
        for op in ["<", "<=", "=", "!=", ">=", ">"] {
            assert_eq!(
                spelled(&format!("RowFilter({op},'binary:a:b')")),
                format!("RowFilter({op}, 'binary:a:b')")
            );
        }
        assert!(matches!(
            err("RowFilter(==, 'binary:a')"),
            FilterError::Argument { index: 1, .. }
        ));
        assert!(matches!(
            err("RowFilter(=, 'bin:a')"),
            FilterError::Argument { index: 2, .. }
        ));
        assert!(matches!(
            err("RowFilter(=, 'binary')"),
            FilterError::Argument { index: 2, .. }
        ));
        assert!(matches!(
            err("RowFilter(<, 'substring:a')"),
            FilterError::Argument { index: 1, .. }
        ));
        assert!(matches!(
            err("ValueFilter(=, 'regexstring:(')"),
            FilterError::Argument { index: 2, .. }
        ));
        assert_eq!(
            spelled("ValueFilter(!=, 'substring:AbC')"),
            "ValueFilter(!=, 'substring:abc')"
        );
        assert_eq!(
            spelled("QualifierFilter(=, 'regexstringnocase:^a.*')"),
            "QualifierFilter(=, 'regexstringnocase:^a.*')"
        );
    }

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

    #[test]
    fn nesting_is_limited() {
        let deep = format!("{}PrefixFilter('a')", "SKIP ".repeat(MAX_FILTER_DEPTH - 1));
        assert!(parse_filter(&deep).is_ok());
        let deeper = format!("{}PrefixFilter('a')", "SKIP ".repeat(MAX_FILTER_DEPTH));
        assert!(matches!(err(&deeper), FilterError::TooDeep { .. }));
        let nested_lists = format!(
            "{}PrefixFilter('a'){}",
            "(PrefixFilter('a') AND ".repeat(MAX_FILTER_DEPTH + 5),
            ")".repeat(MAX_FILTER_DEPTH + 5)
        );
        assert!(matches!(err(&nested_lists), FilterError::TooDeep { .. }));
    }
}
