//! `FilterList` (`FilterListWithAND` / `FilterListWithOR`) with HBase 2.6's merge rules.

use std::cmp::Ordering;

use cairn_cell::{CellRef, KeyValue};

use crate::keys::{compare_cell_to_key, compare_hint_keys};
use crate::{operand, Filter, ReturnCode};

/// How a [`FilterList`] combines its filters.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operator {
    /// AND: a cell must pass every filter (HBase's default).
    MustPassAll,
    /// OR: a cell must pass one filter.
    MustPassOne,
}

/// HBase's `FilterList`. An empty list includes everything.
#[derive(Debug)]
pub struct FilterList {
    operator: Operator,
    filters: Vec<Box<dyn Filter>>,
    reversed: bool,
    /// AND: the filters that asked for a seek on the current cell.
    seek_hint_filters: Vec<usize>,
    /// OR: which filters included the current cell (their transforms apply).
    included: Vec<bool>,
    /// OR: each filter's last code and the cell it was for, to skip calls whose answer is
    /// already known (same column after NEXT_COL, same family after NEXT_ROW, before the hint).
    prev_code: Vec<Option<ReturnCode>>,
    prev_cell: Vec<Option<KeyValue>>,
    /// Which filters were live (not `filter_all_remaining`) when this list last answered
    /// SEEK_NEXT_USING_HINT: `next_cell_hint` only has `&self`.
    hint_live: Vec<bool>,
}

impl FilterList {
    /// A list of `filters` combined with `operator`.
    pub fn new(operator: Operator, filters: Vec<Box<dyn Filter>>) -> FilterList {
        let n = filters.len();
        FilterList {
            operator,
            filters,
            reversed: false,
            seek_hint_filters: Vec::new(),
            included: vec![false; n],
            prev_code: vec![None; n],
            prev_cell: vec![None; n],
            hint_live: vec![false; n],
        }
    }

    /// Appends a filter.
    pub fn add_filter(&mut self, mut filter: Box<dyn Filter>) {
        filter.set_reversed(self.reversed);
        self.filters.push(filter);
        self.included.push(false);
        self.prev_code.push(None);
        self.prev_cell.push(None);
        self.hint_live.push(false);
    }

    /// How the list combines its filters: `MUST_PASS_ALL` (AND) or `MUST_PASS_ONE` (OR).
    pub fn operator(&self) -> Operator {
        self.operator
    }

    /// The filters, in order.
    pub fn filters(&self) -> &[Box<dyn Filter>] {
        &self.filters
    }

    /// The number of filters.
    pub fn len(&self) -> usize {
        self.filters.len()
    }

    /// True if the list has no filters.
    pub fn is_empty(&self) -> bool {
        self.filters.is_empty()
    }

    fn compare_cell_to_key(&self, cell: &CellRef<'_>, key: &[u8]) -> Ordering {
        let cmp = compare_cell_to_key(cell, key);
        if self.reversed {
            cmp.reverse()
        } else {
            cmp
        }
    }

    fn compare_keys(&self, a: &[u8], b: &[u8]) -> Ordering {
        let cmp = compare_hint_keys(a, b);
        if self.reversed {
            cmp.reverse()
        } else {
            cmp
        }
    }

    fn filter_cell_and(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        let mut rc = ReturnCode::Include;
        self.seek_hint_filters.clear();
        let n = self.filters.len();
        let mut i = 0;
        while i < n {
            let filter = &mut self.filters[i];
            if filter.filter_all_remaining() {
                rc = ReturnCode::NextRow;
                break;
            }
            let local = filter.filter_cell(cell);
            if local == ReturnCode::SeekNextUsingHint {
                self.seek_hint_filters.push(i);
            }
            rc = merge_and(rc, local);
            if !rc.is_include() {
                break;
            }
            i += 1;
        }
        // Hinting filters after the one that gave up still get the cell: their hint may jump
        // further than the others' verdict.
        for j in i + 1..n {
            let filter = &mut self.filters[j];
            if filter.is_hinting() && filter.filter_cell(cell) == ReturnCode::SeekNextUsingHint {
                self.seek_hint_filters.push(j);
            }
        }
        if self.seek_hint_filters.is_empty() {
            return rc;
        }
        for k in 0..self.seek_hint_filters.len() {
            let j = self.seek_hint_filters[k];
            self.hint_live[j] = !self.filters[j].filter_all_remaining();
        }
        ReturnCode::SeekNextUsingHint
    }

    /// The code a filter would give again, known from its previous answer in this row.
    fn known_code(&self, i: usize, cell: &CellRef<'_>) -> Option<ReturnCode> {
        let prev = self.prev_cell[i].as_ref()?.as_cell();
        match self.prev_code[i]? {
            ReturnCode::Include | ReturnCode::Skip => None,
            ReturnCode::SeekNextUsingHint => {
                let hint = self.filters[i].next_cell_hint(&prev)?;
                (self.compare_cell_to_key(cell, &hint) == Ordering::Less)
                    .then_some(ReturnCode::SeekNextUsingHint)
            }
            ReturnCode::NextCol | ReturnCode::IncludeAndNextCol => (prev.family() == cell.family()
                && prev.qualifier() == cell.qualifier())
            .then_some(ReturnCode::NextCol),
            ReturnCode::NextRow | ReturnCode::IncludeAndSeekNextRow => {
                (prev.family() == cell.family()).then_some(ReturnCode::NextRow)
            }
        }
    }

    fn filter_cell_or(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        let mut rc: Option<ReturnCode> = None;
        for i in 0..self.filters.len() {
            self.included[i] = false;
            if self.filters[i].filter_all_remaining() {
                continue;
            }
            let local = match self.known_code(i, cell) {
                Some(code) => code,
                None => self.filters[i].filter_cell(cell),
            };
            self.prev_code[i] = Some(local);
            self.prev_cell[i] = match local {
                ReturnCode::Include | ReturnCode::Skip => None,
                _ => Some(cell.to_owned()),
            };
            rc = Some(match rc {
                None => local,
                Some(rc) => merge_or(rc, local),
            });
            self.included[i] = local.is_include();
        }
        let rc = rc.unwrap_or(ReturnCode::Skip);
        if rc == ReturnCode::SeekNextUsingHint {
            for i in 0..self.filters.len() {
                self.hint_live[i] = !self.filters[i].filter_all_remaining();
            }
        }
        rc
    }
}

/// `FilterListWithAND.mergeReturnCode`: the more restrictive code.
fn merge_and(rc: ReturnCode, local: ReturnCode) -> ReturnCode {
    use ReturnCode::*;
    if rc == SeekNextUsingHint {
        return SeekNextUsingHint;
    }
    match (local, rc) {
        (SeekNextUsingHint, _) => SeekNextUsingHint,
        (Include, rc) => rc,
        (IncludeAndNextCol, Include | IncludeAndNextCol) => IncludeAndNextCol,
        (IncludeAndNextCol, IncludeAndSeekNextRow) => IncludeAndSeekNextRow,
        (IncludeAndNextCol, Skip | NextCol) => NextCol,
        (IncludeAndNextCol, NextRow) => NextRow,
        (IncludeAndSeekNextRow, Include | IncludeAndNextCol | IncludeAndSeekNextRow) => {
            IncludeAndSeekNextRow
        }
        (IncludeAndSeekNextRow, Skip | NextCol | NextRow) => NextRow,
        (Skip, Include | Skip) => Skip,
        (Skip, IncludeAndNextCol | NextCol) => NextCol,
        (Skip, IncludeAndSeekNextRow | NextRow) => NextRow,
        (NextCol, Include | IncludeAndNextCol | Skip | NextCol) => NextCol,
        (NextCol, IncludeAndSeekNextRow | NextRow) => NextRow,
        (NextRow, _) => NextRow,
        // rc == SeekNextUsingHint returned above.
        (_, SeekNextUsingHint) => SeekNextUsingHint,
    }
}

/// `FilterListWithOR.mergeReturnCode`: the less restrictive code.
fn merge_or(rc: ReturnCode, local: ReturnCode) -> ReturnCode {
    use ReturnCode::*;
    match (local, rc) {
        (Include, _) => Include,
        (IncludeAndNextCol, Include | Skip | SeekNextUsingHint) => Include,
        (IncludeAndNextCol, IncludeAndNextCol | IncludeAndSeekNextRow | NextCol | NextRow) => {
            IncludeAndNextCol
        }
        (IncludeAndSeekNextRow, Include | Skip | SeekNextUsingHint) => Include,
        (IncludeAndSeekNextRow, IncludeAndNextCol | NextCol) => IncludeAndNextCol,
        (IncludeAndSeekNextRow, IncludeAndSeekNextRow | NextRow) => IncludeAndSeekNextRow,
        (Skip, Include | IncludeAndNextCol | IncludeAndSeekNextRow) => Include,
        (Skip, Skip | NextCol | NextRow | SeekNextUsingHint) => Skip,
        (NextCol, Include) => Include,
        (NextCol, NextCol | NextRow) => NextCol,
        (NextCol, IncludeAndNextCol | IncludeAndSeekNextRow) => IncludeAndNextCol,
        (NextCol, Skip | SeekNextUsingHint) => Skip,
        (NextRow, Skip | SeekNextUsingHint) => Skip,
        (NextRow, rc) => rc,
        (SeekNextUsingHint, Include | IncludeAndNextCol | IncludeAndSeekNextRow) => Include,
        (SeekNextUsingHint, Skip | NextCol | NextRow) => Skip,
        (SeekNextUsingHint, SeekNextUsingHint) => SeekNextUsingHint,
    }
}

impl Filter for FilterList {
    fn reset(&mut self) {
        for f in &mut self.filters {
            f.reset();
        }
        self.seek_hint_filters.clear();
        self.included.iter_mut().for_each(|b| *b = false);
        self.prev_code.iter_mut().for_each(|c| *c = None);
        self.prev_cell.iter_mut().for_each(|c| *c = None);
    }

    fn filter_all_remaining(&mut self) -> bool {
        if self.filters.is_empty() {
            return false;
        }
        match self.operator {
            Operator::MustPassAll => self.filters.iter_mut().any(|f| f.filter_all_remaining()),
            Operator::MustPassOne => self.filters.iter_mut().all(|f| f.filter_all_remaining()),
        }
    }

    fn filter_row_key(&mut self, row: &[u8]) -> bool {
        if self.filters.is_empty() {
            return false;
        }
        match self.operator {
            Operator::MustPassAll => {
                let mut any_filtered = false;
                let mut any_hinting_passed = false;
                for f in &mut self.filters {
                    if f.filter_all_remaining() {
                        return true;
                    } else if f.filter_row_key(row) {
                        any_filtered = true;
                    } else if f.is_hinting() {
                        // A hinting filter that accepts the row may seek into it, so the row
                        // must be read even if another filter rejected its key.
                        any_hinting_passed = true;
                    }
                }
                any_filtered && !any_hinting_passed
            }
            Operator::MustPassOne => {
                // Every live filter sees the row key: stateful ones depend on it.
                let mut all_filtered = true;
                for f in &mut self.filters {
                    if !f.filter_all_remaining() && !f.filter_row_key(row) {
                        all_filtered = false;
                    }
                }
                all_filtered
            }
        }
    }

    fn filter_cell(&mut self, cell: &CellRef<'_>) -> ReturnCode {
        if self.filters.is_empty() {
            return ReturnCode::Include;
        }
        match self.operator {
            Operator::MustPassAll => self.filter_cell_and(cell),
            Operator::MustPassOne => self.filter_cell_or(cell),
        }
    }

    fn transform_cell(&self, mut cell: KeyValue) -> KeyValue {
        for (i, f) in self.filters.iter().enumerate() {
            // AND lists transform by every filter (all of them included the cell).
            if self.operator == Operator::MustPassAll || self.included[i] {
                cell = f.transform_cell(cell);
            }
        }
        cell
    }

    fn has_filter_row(&self) -> bool {
        self.filters.iter().any(|f| f.has_filter_row())
    }

    fn filter_row_cells(&mut self, cells: &mut Vec<KeyValue>) {
        for f in &mut self.filters {
            f.filter_row_cells(cells);
        }
    }

    fn filter_row(&mut self) -> bool {
        if self.filters.is_empty() {
            return false;
        }
        // Both stop at the first decisive answer, as HBase's loops do: later filters (e.g. a
        // PageFilter counting rows) are then not called.
        match self.operator {
            Operator::MustPassAll => self.filters.iter_mut().any(|f| f.filter_row()),
            Operator::MustPassOne => self.filters.iter_mut().all(|f| f.filter_row()),
        }
    }

    fn next_cell_hint(&self, cell: &CellRef<'_>) -> Option<Vec<u8>> {
        if self.filters.is_empty() {
            return None;
        }
        match self.operator {
            Operator::MustPassAll => {
                let mut max: Option<Vec<u8>> = None;
                for &i in &self.seek_hint_filters {
                    if !self.hint_live[i] {
                        continue;
                    }
                    let Some(hint) = self.filters[i].next_cell_hint(cell) else {
                        continue;
                    };
                    if max
                        .as_ref()
                        .is_none_or(|m| self.compare_keys(m, &hint) == Ordering::Less)
                    {
                        max = Some(hint);
                    }
                }
                max
            }
            Operator::MustPassOne => {
                let mut min: Option<Vec<u8>> = None;
                for (i, f) in self.filters.iter().enumerate() {
                    if !self.hint_live[i] {
                        continue;
                    }
                    // One filter without a hint means no seek can be safe.
                    let hint = f.next_cell_hint(cell)?;
                    if min
                        .as_ref()
                        .is_none_or(|m| self.compare_keys(m, &hint) == Ordering::Greater)
                    {
                        min = Some(hint);
                    }
                }
                min
            }
        }
    }

    fn is_family_essential(&self, family: &[u8]) -> bool {
        self.filters.is_empty() || self.filters.iter().any(|f| f.is_family_essential(family))
    }

    fn set_reversed(&mut self, reversed: bool) {
        self.reversed = reversed;
        for f in &mut self.filters {
            f.set_reversed(reversed);
        }
    }

    fn filter_string(&self) -> Option<String> {
        let joiner = match self.operator {
            Operator::MustPassAll => " AND ",
            Operator::MustPassOne => " OR ",
        };
        if self.filters.is_empty() {
            return None;
        }
        let parts = self
            .filters
            .iter()
            .map(|f| f.filter_string().map(operand))
            .collect::<Option<Vec<String>>>()?;
        // Always parenthesised: a list is then one operand wherever it appears.
        Some(format!("({})", parts.join(joiner)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::test_util::*;
    use crate::*;
    use ReturnCode::*;

    const ALL: [ReturnCode; 7] = [
        Include,
        IncludeAndNextCol,
        Skip,
        NextCol,
        NextRow,
        SeekNextUsingHint,
        IncludeAndSeekNextRow,
    ];

    /// A filter that answers a fixed code and records calls.
    #[derive(Debug)]
    struct Fixed {
        code: ReturnCode,
        calls: std::sync::Arc<std::sync::atomic::AtomicUsize>,
        hinting: bool,
        hint_qualifier: &'static str,
    }

    impl Fixed {
        fn new(code: ReturnCode) -> Fixed {
            Fixed {
                code,
                calls: Default::default(),
                hinting: false,
                hint_qualifier: "",
            }
        }
    }

    impl Filter for Fixed {
        fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
            self.calls.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            self.code
        }
        fn next_cell_hint(&self, cell: &CellRef<'_>) -> Option<Vec<u8>> {
            crate::keys::first_on_row_col(cell, self.hint_qualifier.as_bytes())
        }
        fn is_hinting(&self) -> bool {
            self.hinting
        }
    }

    fn one_cell(list: &mut FilterList) -> ReturnCode {
        let c = kv("r", "f", "q", 1, "v");
        list.filter_cell(&c.as_cell())
    }

    #[test]
    fn or_merge_is_the_less_restrictive_code() {
        // Spot checks from FilterListWithOR's table.
        assert_eq!(merge_or(Skip, IncludeAndNextCol), Include);
        assert_eq!(merge_or(NextRow, NextCol), NextCol);
        assert_eq!(merge_or(SeekNextUsingHint, Skip), Skip);
        assert_eq!(merge_or(NextCol, IncludeAndSeekNextRow), IncludeAndNextCol);
        assert_eq!(
            merge_or(NextRow, IncludeAndSeekNextRow),
            IncludeAndSeekNextRow
        );
        // Symmetric, and INCLUDE wins.
        for a in ALL {
            for b in ALL {
                assert_eq!(merge_or(a, b), merge_or(b, a), "{a:?} {b:?}");
            }
            assert_eq!(merge_or(a, Include), Include);
            assert_eq!(merge_or(a, a), a);
        }
    }

    #[test]
    fn and_merge_is_the_more_restrictive_code() {
        assert_eq!(merge_and(Skip, IncludeAndNextCol), NextCol);
        assert_eq!(merge_and(IncludeAndSeekNextRow, Skip), NextRow);
        assert_eq!(
            merge_and(IncludeAndNextCol, IncludeAndSeekNextRow),
            IncludeAndSeekNextRow
        );
        for a in ALL {
            assert_eq!(
                merge_and(a, NextRow),
                if a == SeekNextUsingHint { a } else { NextRow }
            );
            assert_eq!(merge_and(Include, a), a);
            assert_eq!(merge_and(a, a), a);
        }
    }

    #[test]
    fn and_stops_early_but_asks_remaining_hinting_filters() {
        let mut hinting = Fixed::new(SeekNextUsingHint);
        hinting.hinting = true;
        hinting.hint_qualifier = "z";
        let hint_calls = hinting.calls.clone();
        let plain = Fixed::new(Include);
        let plain_calls = plain.calls.clone();
        let mut list = FilterList::new(
            Operator::MustPassAll,
            vec![
                Box::new(Fixed::new(NextCol)),
                Box::new(plain),
                Box::new(hinting),
            ],
        );
        assert_eq!(one_cell(&mut list), SeekNextUsingHint);
        assert_eq!(plain_calls.load(std::sync::atomic::Ordering::SeqCst), 0);
        assert_eq!(hint_calls.load(std::sync::atomic::Ordering::SeqCst), 1);
        let c = kv("r", "f", "q", 1, "v");
        let hint = list.next_cell_hint(&c.as_cell()).unwrap();
        assert_eq!(cairn_cell::KeyRef::parse(&hint).unwrap().qualifier(), b"z");
    }

    #[test]
    fn and_takes_the_largest_hint_or_the_smallest() {
        let mk = |q: &'static str| {
            let mut f = Fixed::new(SeekNextUsingHint);
            f.hinting = true;
            f.hint_qualifier = q;
            Box::new(f) as Box<dyn Filter>
        };
        let c = kv("r", "f", "a", 1, "v");
        let mut and = FilterList::new(Operator::MustPassAll, vec![mk("m"), mk("x"), mk("c")]);
        assert_eq!(and.filter_cell(&c.as_cell()), SeekNextUsingHint);
        // The AND loop stops at the first SEEK; the later hinting filters are still asked.
        let q = |h: Vec<u8>| cairn_cell::KeyRef::parse(&h).unwrap().qualifier().to_vec();
        assert_eq!(q(and.next_cell_hint(&c.as_cell()).unwrap()), b"x");
        let mut or = FilterList::new(Operator::MustPassOne, vec![mk("m"), mk("x"), mk("c")]);
        assert_eq!(or.filter_cell(&c.as_cell()), SeekNextUsingHint);
        assert_eq!(q(or.next_cell_hint(&c.as_cell()).unwrap()), b"c");
    }

    #[test]
    fn or_with_mixed_codes() {
        let mut list = FilterList::new(
            Operator::MustPassOne,
            vec![
                Box::new(Fixed::new(NextRow)),
                Box::new(Fixed::new(IncludeAndNextCol)),
            ],
        );
        assert_eq!(one_cell(&mut list), IncludeAndNextCol);
        let mut list = FilterList::new(
            Operator::MustPassOne,
            vec![
                Box::new(Fixed::new(SeekNextUsingHint)),
                Box::new(Fixed::new(NextCol)),
            ],
        );
        assert_eq!(one_cell(&mut list), Skip);
        let mut empty = FilterList::new(Operator::MustPassOne, vec![]);
        assert_eq!(one_cell(&mut empty), Include);
    }

    #[test]
    fn or_reuses_known_answers_within_the_column_or_family() {
        let next_col = Fixed::new(NextCol);
        let calls = next_col.calls.clone();
        let mut list = FilterList::new(
            Operator::MustPassOne,
            vec![Box::new(next_col), Box::new(Fixed::new(Include))],
        );
        let t = cells(&[
            ("r", "f", "a", 3, "1"),
            ("r", "f", "a", 2, "2"),
            ("r", "f", "b", 1, "3"),
        ]);
        let out = run(&mut list, &t);
        assert_eq!(values_of(&out.rows), ["1", "2", "3"]);
        // Called for a@3 and b@1; a@2 reused the NEXT_COL answer.
        assert_eq!(calls.load(std::sync::atomic::Ordering::SeqCst), 2);
    }

    #[test]
    fn or_of_real_filters() {
        let t = cells(&[
            ("a1", "f", "q", 1, "x"),
            ("b1", "f", "q", 1, "y"),
            ("c1", "f", "q", 1, "x"),
        ]);
        let mut list = FilterList::new(
            Operator::MustPassOne,
            vec![
                Box::new(PrefixFilter::new("b")),
                Box::new(ValueFilter::new(CompareOp::Equal, Comparator::binary("x"))),
            ],
        );
        let out = run(&mut list, &t);
        assert_eq!(rows_of(&out.rows), ["a1", "b1", "c1"]);
        // AND: only b1 has the prefix, and its value is not x.
        let mut list = FilterList::new(
            Operator::MustPassAll,
            vec![
                Box::new(PrefixFilter::new("b")),
                Box::new(ValueFilter::new(CompareOp::Equal, Comparator::binary("y"))),
            ],
        );
        let out = run(&mut list, &t);
        assert_eq!(rows_of(&out.rows), ["b1"]);
    }

    #[test]
    fn or_transform_only_by_including_filters() {
        let t = cells(&[("r", "f", "a", 1, "keep"), ("r", "f", "b", 1, "strip")]);
        let mut list = FilterList::new(
            Operator::MustPassOne,
            vec![
                Box::new(ValueFilter::new(
                    CompareOp::Equal,
                    Comparator::binary("keep"),
                )),
                Box::new(FilterList::new(
                    Operator::MustPassAll,
                    vec![
                        Box::new(QualifierFilter::new(
                            CompareOp::Equal,
                            Comparator::binary("b"),
                        )),
                        Box::new(KeyOnlyFilter::new(false)),
                    ],
                )),
            ],
        );
        let out = run(&mut list, &t);
        assert_eq!(values_of(&out.rows), ["keep", ""]);
    }

    #[test]
    fn and_row_key_lets_hinting_filters_keep_the_row() {
        let mut list = FilterList::new(
            Operator::MustPassAll,
            vec![
                Box::new(RowFilter::new(CompareOp::Equal, Comparator::binary("x"))),
                Box::new(ColumnPrefixFilter::new("q")),
            ],
        );
        assert!(!list.filter_row_key(b"r"));
        let mut list = FilterList::new(
            Operator::MustPassAll,
            vec![
                Box::new(RowFilter::new(CompareOp::Equal, Comparator::binary("x"))),
                Box::new(ValueFilter::new(CompareOp::Equal, Comparator::binary("x"))),
            ],
        );
        assert!(list.filter_row_key(b"r"));
    }

    #[test]
    fn filter_row_short_circuits() {
        let t = cells(&[("r1", "f", "q", 1, "v"), ("r2", "f", "q", 1, "v")]);
        // OR: the SCVF (column missing, filter_if_missing) says drop; PageFilter is asked next.
        let mut list = FilterList::new(
            Operator::MustPassOne,
            vec![
                Box::new(
                    SingleColumnValueFilter::new(
                        "f",
                        "x",
                        CompareOp::Equal,
                        Comparator::binary("v"),
                    )
                    .unwrap()
                    .with_filter_if_missing(true),
                ),
                Box::new(PageFilter::new(1).unwrap()),
            ],
        );
        let out = run(&mut list, &t);
        // r1: SCVF says drop, PageFilter counts 1 (not over the page) → kept. r2: PageFilter is
        // done (it is not asked for cells any more) but filter_row still reaches it: 2 > 1, so
        // both say drop.
        assert_eq!(rows_of(&out.rows), ["r1"]);
    }
}
