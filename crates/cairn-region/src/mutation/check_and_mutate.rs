//! HBase's `CheckAndMutate`: a condition on one row and the mutation applied if it holds.

use cairn_cell::KeyValue;
use cairn_filter::{CompareOp, Filter};

use super::{Append, Delete, Increment, Put, RowMutations};
use crate::matcher::TimeRange;

/// What a [`CheckAndMutate`] checks, on the row's state under the row lock.
#[derive(Debug)]
pub enum Condition {
    /// HBase's `ifMatches(family, qualifier, op, value)`: compares `value` with the newest
    /// value of `family:qualifier` with `value` on the left, as HBase does (`Less` holds when
    /// `value` < the stored value). An empty `value` stands for "no value": it matches a
    /// missing column or one whose newest value is empty (`NotEqual`: the opposite). A
    /// non-empty `value` never matches a missing column.
    Column {
        /// The column's family; it must exist.
        family: Vec<u8>,
        /// The column's qualifier.
        qualifier: Vec<u8>,
        /// How `value` must compare with the stored value (`NoOp` is refused unless `value`
        /// is empty, as HBase refuses it).
        op: CompareOp,
        /// The expected value; empty for "no value".
        value: Vec<u8>,
    },
    /// HBase 2.4+'s `ifMatches(Filter)`: holds when a read of the row with this filter (and
    /// the check's time range) returns any cell.
    Filter(Box<dyn Filter>),
}

/// What a [`CheckAndMutate`] applies when its condition holds; its row must be the check's.
#[derive(Debug)]
pub enum Action {
    /// A put; columns without a timestamp are stamped no older than the checked cell.
    Put(Put),
    /// A delete.
    Delete(Delete),
    /// An increment; its new cells come back in the result.
    Increment(Increment),
    /// An append; its new cells come back in the result.
    Append(Append),
    /// Puts and deletes applied together ([`RowMutations`]).
    RowMutations(RowMutations),
}

impl Action {
    /// The row the action writes.
    pub fn row(&self) -> &[u8] {
        match self {
            Action::Put(p) => &p.row,
            Action::Delete(d) => &d.row,
            Action::Increment(i) => &i.row,
            Action::Append(a) => &a.row,
            Action::RowMutations(m) => &m.row,
        }
    }
}

impl From<Put> for Action {
    fn from(p: Put) -> Action {
        Action::Put(p)
    }
}

impl From<Delete> for Action {
    fn from(d: Delete) -> Action {
        Action::Delete(d)
    }
}

impl From<Increment> for Action {
    fn from(i: Increment) -> Action {
        Action::Increment(i)
    }
}

impl From<Append> for Action {
    fn from(a: Append) -> Action {
        Action::Append(a)
    }
}

impl From<RowMutations> for Action {
    fn from(m: RowMutations) -> Action {
        Action::RowMutations(m)
    }
}

/// A condition on one row and the mutation to apply if it holds, checked and applied under
/// one row lock (HBase's `CheckAndMutate`, run by `HRegion.checkAndMutate`).
#[derive(Debug)]
pub struct CheckAndMutate {
    /// The row checked; the action must be for it too.
    pub row: Vec<u8>,
    /// What must hold.
    pub condition: Condition,
    /// Only cells in this range are looked at by the check (HBase's `timeRange`); all time by
    /// default.
    pub time_range: TimeRange,
    /// What is applied if the condition holds.
    pub action: Action,
}

impl CheckAndMutate {
    /// HBase's `ifMatches(family, qualifier, op, value)`: see [`Condition::Column`] for the
    /// sense of `op`.
    pub fn if_matches(
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        op: CompareOp,
        value: impl AsRef<[u8]>,
        action: impl Into<Action>,
    ) -> CheckAndMutate {
        CheckAndMutate {
            row: row.as_ref().to_vec(),
            condition: Condition::Column {
                family: family.as_ref().to_vec(),
                qualifier: qualifier.as_ref().to_vec(),
                op,
                value: value.as_ref().to_vec(),
            },
            time_range: TimeRange::default(),
            action: action.into(),
        }
    }

    /// HBase's `ifEquals`: the newest value of the column is `value`.
    pub fn if_equals(
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        value: impl AsRef<[u8]>,
        action: impl Into<Action>,
    ) -> CheckAndMutate {
        CheckAndMutate::if_matches(row, family, qualifier, CompareOp::Equal, value, action)
    }

    /// HBase's `ifNotExists`: the column has no value (an empty newest value counts as none,
    /// as in HBase).
    pub fn if_not_exists(
        row: impl AsRef<[u8]>,
        family: impl AsRef<[u8]>,
        qualifier: impl AsRef<[u8]>,
        action: impl Into<Action>,
    ) -> CheckAndMutate {
        CheckAndMutate::if_matches(row, family, qualifier, CompareOp::Equal, b"", action)
    }

    /// HBase's `ifMatches(Filter)`: the row has a cell the filter passes.
    pub fn if_filter(
        row: impl AsRef<[u8]>,
        filter: Box<dyn Filter>,
        action: impl Into<Action>,
    ) -> CheckAndMutate {
        CheckAndMutate {
            row: row.as_ref().to_vec(),
            condition: Condition::Filter(filter),
            time_range: TimeRange::default(),
            action: action.into(),
        }
    }

    /// Looks only at cells in `tr` (HBase's `timeRange`).
    pub fn time_range(mut self, tr: TimeRange) -> CheckAndMutate {
        self.time_range = tr;
        self
    }
}

/// What a [`CheckAndMutate`] did (HBase's `CheckAndMutateResult`).
#[derive(Clone, Debug, Default, PartialEq)]
pub struct CheckAndMutateResult {
    /// Whether the condition held and the action was applied.
    pub success: bool,
    /// The new cells of an applied increment or append (unless it asked for no results);
    /// empty otherwise.
    pub cells: Vec<KeyValue>,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builders_set_hbases_conditions() {
        let c = CheckAndMutate::if_not_exists("r", "f", "q", Put::new("r").add("f", "q", "v"));
        match &c.condition {
            Condition::Column {
                family,
                qualifier,
                op,
                value,
            } => {
                assert_eq!(
                    (family.as_slice(), qualifier.as_slice()),
                    (&b"f"[..], &b"q"[..])
                );
                // ifNotExists is EQUAL to no value.
                assert_eq!((*op, value.as_slice()), (CompareOp::Equal, &b""[..]));
            }
            other => panic!("{other:?}"),
        }
        assert!(c.time_range.is_all_time());
        assert_eq!(c.action.row(), b"r");
        let c = CheckAndMutate::if_equals("r", "f", "q", "1", Delete::new("r"))
            .time_range(TimeRange::new(1, 2));
        assert!(matches!(
            c.condition,
            Condition::Column { op: CompareOp::Equal, ref value, .. } if value == b"1"
        ));
        assert_eq!(c.time_range, TimeRange::new(1, 2));
        let f = Box::new(cairn_filter::KeyOnlyFilter::new(false));
        let c = CheckAndMutate::if_filter("r", f, Increment::new("x"));
        assert!(matches!(c.condition, Condition::Filter(_)));
        assert_eq!(c.action.row(), b"x");
        for (a, row) in [
            (Action::from(Append::new("a")), "a"),
            (Action::from(RowMutations::new("m")), "m"),
        ] {
            assert_eq!(a.row(), row.as_bytes());
        }
    }
}
