//! Tokenizing as `ParseFilter` does: operator keywords and their required neighbours, the
//! extent of a simple filter (to the first `)` outside quotes) and its argument list.

use super::expression::Op;
use crate::FilterError;

/// `checkForOr` / `checkForAnd` / `checkForSkip` / `checkForWhile`, in that order.
pub(super) fn keyword_at(b: &[u8], i: usize) -> Option<(Op, usize)> {
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

/// `isQuoteUnescaped`: a quote not followed by another quote.
fn quote_unescaped(b: &[u8], i: usize) -> bool {
    i + 1 == b.len() || b[i + 1] != b'\''
}

/// `extractFilterSimpleExpression`: the index of the `)` that ends the simple filter at
/// `start`.
pub(super) fn simple_expression_end(b: &[u8], start: usize) -> Result<usize, FilterError> {
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
pub(super) struct Arg {
    pub(super) bytes: Vec<u8>,
    pub(super) offset: usize,
}

/// `getFilterArguments`.
pub(super) fn filter_arguments(expr: &[u8], base: usize) -> Result<Vec<Arg>, FilterError> {
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

#[cfg(test)]
mod tests {
    use crate::parse::{err, spelled};
    use crate::{parse_filter, FilterError};

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
}
