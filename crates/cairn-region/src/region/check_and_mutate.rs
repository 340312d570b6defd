//! Check-and-mutate (HBase's `checkAndMutate`): a condition on one row checked and the
//! mutation applied under one exclusive row lock.

use cairn_filter::CompareOp;

use super::*;
use crate::mutation::{Action, CheckAndMutate, CheckAndMutateResult, Condition};

/// Whether a column condition holds, decided as HBase 2.6's
/// `HRegion.checkAndMutateInternal` decides it (with its `matches(op, compareResult)`):
///
/// - An empty `expected` means "no value": with any operator but `NotEqual` it holds when the
///   column is missing or its newest value is empty; with `NotEqual`, when the newest value
///   is there and not empty.
/// - Otherwise a missing column never matches, and the expected value is compared with the
///   stored one with the expected value on the LEFT (`BinaryComparator.compareTo(cell)`,
///   unsigned bytes): `Less` holds when `expected < stored`, `Greater` when
///   `expected > stored`. This is the reverse of a filter's sense, where `Less` keeps cells
///   below the value.
/// - `NoOp` cannot be decided against a value: HBase throws, cairn refuses the request.
pub fn column_condition_holds(
    op: CompareOp,
    expected: &[u8],
    newest: Option<&[u8]>,
) -> Result<bool> {
    if expected.is_empty() {
        let wants_no_value = op != CompareOp::NotEqual;
        return Ok(match newest {
            None => wants_no_value,
            Some(v) => v.is_empty() == wants_no_value,
        });
    }
    let Some(stored) = newest else {
        return Ok(false);
    };
    let c = expected.cmp(stored);
    Ok(match op {
        CompareOp::Less => c.is_lt(),
        CompareOp::LessOrEqual => c.is_le(),
        CompareOp::Equal => c.is_eq(),
        CompareOp::NotEqual => c.is_ne(),
        CompareOp::GreaterOrEqual => c.is_ge(),
        CompareOp::Greater => c.is_gt(),
        CompareOp::NoOp => {
            return Err(RegionError::InvalidArgument(
                "compare operator NO_OP cannot decide a check-and-mutate condition".into(),
            ))
        }
    })
}

impl Region {
    /// Checks `cam`'s condition on its row and, if it holds, applies its action, all under
    /// the row's exclusive lock (HBase's `checkAndMutate`). The check reads the newest
    /// version of the column (or the row through the filter) within the check's time range.
    /// A put's columns without a timestamp are stamped no earlier than the cell the check
    /// read, so the write is not hidden behind it. The action must be for the checked row
    /// ([`RegionError::InvalidArgument`], HBase's "Action's getRow must match"); a condition
    /// on an unknown family fails with [`RegionError::NoSuchFamily`].
    pub fn check_and_mutate(&self, cam: CheckAndMutate) -> Result<CheckAndMutateResult> {
        let CheckAndMutate {
            row,
            condition,
            time_range,
            action,
        } = cam;
        if action.row() != row.as_slice() {
            return Err(RegionError::InvalidArgument(format!(
                "the action's row {} does not match the checked row {}",
                cairn_cell::Escaped(action.row()),
                cairn_cell::Escaped(&row)
            )));
        }
        let mut get = Get::new(&row).time_range(time_range);
        let column = match condition {
            Condition::Column {
                family,
                qualifier,
                op,
                value,
            } => {
                self.check_family(&family)?;
                get = get.column(&family, &qualifier);
                Some((op, value))
            }
            Condition::Filter(f) => {
                get = get.filter(f);
                None
            }
        };
        self.check_row(&row)?;
        let _row = self.row_lock(&row).write();
        let found = self.get(get)?;
        let holds = match &column {
            None => !found.is_empty(),
            Some((op, value)) => {
                column_condition_holds(*op, value, found.first().map(|c| c.as_cell().value))?
            }
        };
        if !holds {
            return Ok(CheckAndMutateResult::default());
        }
        let checked_ts = found.first().map_or(0, |c| c.key().timestamp());
        let cells = match &action {
            Action::Put(p) => {
                self.put_locked_at(p, checked_ts)?;
                Vec::new()
            }
            Action::Delete(d) => {
                self.delete_locked(d)?;
                Vec::new()
            }
            Action::Increment(i) => self.increment_locked(i)?,
            Action::Append(a) => self.append_locked(a)?,
            Action::RowMutations(m) => {
                self.mutate_row_locked(m, checked_ts)?;
                Vec::new()
            }
        };
        Ok(CheckAndMutateResult {
            success: true,
            cells,
        })
    }

    /// Applies `put` only if the newest value of the column equals `expected` (HBase's
    /// `checkAndPut` with `EQUAL`). `None` or an empty value means "no value": it matches a
    /// missing column or an empty newest value, as in HBase. Returns whether it was applied.
    pub fn check_and_put(
        &self,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        put: &Put,
    ) -> Result<bool> {
        let cam = CheckAndMutate::if_equals(
            &put.row,
            family,
            qualifier,
            expected.unwrap_or_default(),
            put.clone(),
        );
        Ok(self.check_and_mutate(cam)?.success)
    }

    /// Like [`Region::check_and_put`] for a delete.
    pub fn check_and_delete(
        &self,
        family: &[u8],
        qualifier: &[u8],
        expected: Option<&[u8]>,
        delete: &Delete,
    ) -> Result<bool> {
        let cam = CheckAndMutate::if_equals(
            &delete.row,
            family,
            qualifier,
            expected.unwrap_or_default(),
            delete.clone(),
        );
        Ok(self.check_and_mutate(cam)?.success)
    }
}

#[cfg(test)]
mod tests {
    use super::super::tests::{region, values};
    use super::*;

    #[test]
    fn the_expected_value_is_on_the_left_of_the_operator() {
        use CompareOp::*;
        // Stored "b"; expected "a" < "b" < "c" byte-wise.
        let table = [
            (Less, "a", true),
            (Less, "b", false),
            (Less, "c", false),
            (LessOrEqual, "a", true),
            (LessOrEqual, "b", true),
            (LessOrEqual, "c", false),
            (Equal, "b", true),
            (Equal, "a", false),
            (NotEqual, "a", true),
            (NotEqual, "b", false),
            (GreaterOrEqual, "c", true),
            (GreaterOrEqual, "b", true),
            (GreaterOrEqual, "a", false),
            (Greater, "c", true),
            (Greater, "b", false),
            (Greater, "a", false),
        ];
        for (op, expected, want) in table {
            let got = column_condition_holds(op, expected.as_bytes(), Some(b"b")).unwrap();
            assert_eq!(got, want, "{expected} {op:?} b");
        }
        // Unsigned bytes: 0x80 sorts after 0x7f.
        assert!(column_condition_holds(Greater, b"\x80", Some(b"\x7f")).unwrap());
    }

    #[test]
    fn an_empty_expected_value_means_no_value() {
        use CompareOp::*;
        for op in [Less, LessOrEqual, Equal, GreaterOrEqual, Greater, NoOp] {
            assert!(column_condition_holds(op, b"", None).unwrap(), "{op:?}");
            assert!(
                column_condition_holds(op, b"", Some(b"")).unwrap(),
                "{op:?}"
            );
            assert!(
                !column_condition_holds(op, b"", Some(b"x")).unwrap(),
                "{op:?}"
            );
        }
        assert!(!column_condition_holds(NotEqual, b"", None).unwrap());
        assert!(!column_condition_holds(NotEqual, b"", Some(b"")).unwrap());
        assert!(column_condition_holds(NotEqual, b"", Some(b"x")).unwrap());
        // A value never matches a missing column, whatever the operator.
        for op in [
            Less,
            LessOrEqual,
            Equal,
            NotEqual,
            GreaterOrEqual,
            Greater,
            NoOp,
        ] {
            assert!(!column_condition_holds(op, b"v", None).unwrap(), "{op:?}");
        }
        assert!(matches!(
            column_condition_holds(NoOp, b"v", Some(b"v")),
            Err(RegionError::InvalidArgument(_))
        ));
    }

    #[test]
    fn check_and_put_compares_the_newest_value() {
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        let p = |v: &str| Put::new("a").add("f", "q", v);
        assert!(
            r.check_and_put(b"f", b"q", None, &p("1")).unwrap(),
            "absent"
        );
        assert!(
            !r.check_and_put(b"f", b"q", None, &p("2")).unwrap(),
            "present now"
        );
        assert!(!r.check_and_put(b"f", b"q", Some(b"0"), &p("2")).unwrap());
        assert!(r.check_and_put(b"f", b"q", Some(b"1"), &p("2")).unwrap());
        assert_eq!(values(&r.get(Get::new("a")).unwrap()), vec!["2"]);
        let d = Delete::new("a");
        assert!(!r.check_and_delete(b"f", b"q", Some(b"1"), &d).unwrap());
        assert!(r.check_and_delete(b"f", b"q", Some(b"2"), &d).unwrap());
        assert!(r.get(Get::new("a")).unwrap().is_empty());
    }

    #[test]
    fn a_put_is_stamped_after_the_checked_cell() {
        // HBase: ts = max(now, checked cell's ts), so a put after a future-stamped value is
        // not hidden behind it.
        let dir = tempfile::tempdir().unwrap();
        let r = region(dir.path(), b"", b"", 1 << 20);
        let future = now_ms() + 3_600_000;
        r.put(&Put::new("a").add_at("f", "q", future, "old"))
            .unwrap();
        let cam =
            CheckAndMutate::if_equals("a", "f", "q", "old", Put::new("a").add("f", "q", "new"));
        assert!(r.check_and_mutate(cam).unwrap().success);
        let got = r.get(Get::new("a")).unwrap();
        assert_eq!(values(&got), ["new"]);
        assert_eq!(got[0].key().timestamp(), future);
    }
}
