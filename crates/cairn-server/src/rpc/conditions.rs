//! Check-and-mutate and atomic row mutations: a `Condition` message and the mutations it
//! guards as the region store's [`CheckAndMutate`], and a Multi's atomic region action as one
//! [`RowMutations`].

use std::sync::Arc;

use cairn_cell::KeyValue;
use cairn_filter::CompareOp;
use cairn_region::mutation::{Action, CheckAndMutate, Condition, RowMutation, RowMutations};
use cairn_region::Region;
use cairn_rpc::pb;
use prost::Message;

use super::convert::{time_range, Mutation};
use super::errors::RpcError;
use super::filter::filter_from_pb;
use super::Services;

/// HBase's `CompareType` as cairn-filter's operator.
pub fn compare_op(t: i32) -> Result<CompareOp, RpcError> {
    use pb::CompareType as T;
    Ok(
        match T::try_from(t)
            .map_err(|_| RpcError::bad_request(format!("compare type {t} is not HBase's")))?
        {
            T::Less => CompareOp::Less,
            T::LessOrEqual => CompareOp::LessOrEqual,
            T::Equal => CompareOp::Equal,
            T::NotEqual => CompareOp::NotEqual,
            T::GreaterOrEqual => CompareOp::GreaterOrEqual,
            T::Greater => CompareOp::Greater,
            T::NoOp => CompareOp::NoOp,
        },
    )
}

/// The value a condition compares with: HBase's client always sends a `BinaryComparator`.
fn comparator_value(c: &pb::Comparator) -> Result<Vec<u8>, RpcError> {
    const BINARY: &str = "org.apache.hadoop.hbase.filter.BinaryComparator";
    if c.name != BINARY {
        return Err(RpcError::bad_request(format!(
            "a check-and-mutate condition with comparator {} is not supported (cairn takes {BINARY})",
            c.name
        )));
    }
    let b = pb::BinaryComparator::decode(c.serialized_comparator.as_deref().unwrap_or_default())
        .map_err(|e| RpcError::bad_request(format!("{BINARY}: the bytes do not parse: {e}")))?;
    Ok(b.comparable.value.unwrap_or_default())
}

fn row_mutations(row: &[u8], muts: Vec<Mutation>) -> Result<RowMutations, RpcError> {
    let mut rm = RowMutations::new(row);
    for m in muts {
        rm.mutations.push(match m {
            Mutation::Put(p) => RowMutation::Put(p),
            Mutation::Delete(d) => RowMutation::Delete(d),
            Mutation::Increment(_) | Mutation::Append(_) => return Err(RpcError::bad_request(
                "increments and appends inside an atomic row mutation are not supported by cairn",
            )),
        });
    }
    Ok(rm)
}

impl Services {
    /// HBase's `checkAndMutate`: whether it applied, and an Increment's or Append's cells.
    pub(super) fn check_and_mutate(
        &self,
        region: &Arc<Region>,
        cond: &pb::Condition,
        mut muts: Vec<Mutation>,
    ) -> Result<(bool, Option<Vec<KeyValue>>), RpcError> {
        let condition = match &cond.filter {
            Some(f) => Condition::Filter(
                filter_from_pb(f).map_err(|e| RpcError::bad_request(e.to_string()))?,
            ),
            None => Condition::Column {
                family: cond.family.clone().ok_or_else(|| {
                    RpcError::bad_request("condition has neither a filter nor a family")
                })?,
                qualifier: cond.qualifier.clone().unwrap_or_default(),
                op: compare_op(cond.compare_type.unwrap_or(pb::CompareType::Equal as i32))?,
                value: match &cond.comparator {
                    Some(c) => comparator_value(c)?,
                    None => Vec::new(),
                },
            },
        };
        let action = match muts.len() {
            0 => return Err(RpcError::bad_request("check-and-mutate without a mutation")),
            1 => match muts.pop().expect("one") {
                Mutation::Put(p) => Action::Put(p),
                Mutation::Delete(d) => Action::Delete(d),
                Mutation::Increment(i) => Action::Increment(i),
                Mutation::Append(a) => Action::Append(a),
            },
            _ => Action::RowMutations(row_mutations(&cond.row, muts)?),
        };
        let returns_cells = matches!(action, Action::Increment(_) | Action::Append(_));
        let cam = CheckAndMutate {
            row: cond.row.clone(),
            condition,
            time_range: cond.time_range.as_ref().map(time_range).unwrap_or_default(),
            action,
        };
        let r = region.check_and_mutate(cam)?;
        if r.success {
            self.rs.wrote(region);
        }
        Ok((r.success, returns_cells.then_some(r.cells)))
    }

    /// A Multi's atomic region action without a condition (HBase's `mutateRow`).
    pub(super) fn mutate_row(
        &self,
        region: &Arc<Region>,
        muts: Vec<Mutation>,
    ) -> Result<Option<Vec<KeyValue>>, RpcError> {
        let Some(row) = muts.first().map(|m| m.row().to_vec()) else {
            return Ok(None);
        };
        let rm = row_mutations(&row, muts)?;
        region.mutate_row(&rm)?;
        self.rs.wrote(region);
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn compare_types_map_one_to_one() {
        assert_eq!(
            compare_op(pb::CompareType::Greater as i32).unwrap(),
            CompareOp::Greater
        );
        assert_eq!(
            compare_op(pb::CompareType::Less as i32).unwrap(),
            CompareOp::Less
        );
        assert_eq!(
            compare_op(pb::CompareType::NoOp as i32).unwrap(),
            CompareOp::NoOp
        );
        assert!(compare_op(99).is_err());
    }

    #[test]
    fn conditions_take_binary_comparators_only() {
        let c = pb::Comparator {
            name: "org.apache.hadoop.hbase.filter.BinaryComparator".into(),
            serialized_comparator: Some(
                pb::BinaryComparator {
                    comparable: pb::ByteArrayComparable {
                        value: Some(b"v".to_vec()),
                    },
                }
                .encode_to_vec(),
            ),
        };
        assert_eq!(comparator_value(&c).unwrap(), b"v");
        let c = pb::Comparator {
            name: "org.apache.hadoop.hbase.filter.RegexStringComparator".into(),
            serialized_comparator: None,
        };
        assert!(comparator_value(&c).unwrap_err().do_not_retry);
    }
}
