//! `ParseFilter`'s expression algorithm: an operator stack and a filter stack, reduced by
//! precedence (`SKIP`/`WHILE` over `AND` over `OR`), with HBase's quirks kept.

use super::filters::parse_simple_expression;
use super::lexer::{keyword_at, simple_expression_end};
use super::MAX_FILTER_DEPTH;
use crate::{Filter, FilterError, FilterList, Operator, SkipFilter, WhileMatchFilter};

/// An entry of the operator stack: an operator keyword or an open parenthesis.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Op {
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

/// An entry of the filter stack: a parsed filter and how deeply it nests.
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
#[cfg(test)]
mod tests {
    use super::parse_filter;
    use crate::parse::{err, spelled, MAX_FILTER_DEPTH};
    use crate::FilterError;

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
