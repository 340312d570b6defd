//! Compare operators and comparators (`binary:`, `binaryprefix:`, `regexstring:`,
//! `regexstringnocase:`, `substring:`) as `ParseFilter` reads them from a filter's arguments.

use super::args::Args;
use crate::{Comparator, CompareOp, FilterError};

impl Args {
    /// A compare operator token (`CompareOperator` as `ParseFilter` spells it).
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
    pub(super) fn comparison(
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
}

#[cfg(test)]
mod tests {
    use crate::parse::{err, spelled};
    use crate::FilterError;

    #[test]
    fn operators_and_comparators() {
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
}
