//! HBase's `RowMutations`: puts and deletes of one row applied as one atomic write.

use super::{Delete, Put};

/// One mutation of a [`RowMutations`].
#[derive(Clone, Debug, PartialEq)]
pub enum RowMutation {
    /// Writes columns.
    Put(Put),
    /// Writes delete markers.
    Delete(Delete),
}

impl RowMutation {
    /// The row the mutation is for.
    pub fn row(&self) -> &[u8] {
        match self {
            RowMutation::Put(p) => &p.row,
            RowMutation::Delete(d) => &d.row,
        }
    }
}

/// Puts and deletes of one row applied atomically (HBase's `RowMutations`, run by
/// `HRegion.mutateRow`): under one row lock, with one sequence id and one WAL record, so a
/// reader sees all of them or none. Every mutation must be for [`row`](Self::row), and a
/// mutation that fails its checks (wrong row, unknown family, negative timestamp) fails the
/// whole, writing nothing. HBase 2.4+ also allows increments and appends here; cairn takes
/// puts and deletes only.
#[derive(Clone, Debug, PartialEq)]
pub struct RowMutations {
    /// The row every mutation is for.
    pub row: Vec<u8>,
    /// The mutations, applied in this order under one sequence id.
    pub mutations: Vec<RowMutation>,
}

impl RowMutations {
    /// Mutations of `row`, none yet.
    pub fn new(row: impl AsRef<[u8]>) -> RowMutations {
        RowMutations {
            row: row.as_ref().to_vec(),
            mutations: Vec::new(),
        }
    }

    /// Adds a put (HBase's `add(Put)`; the row is checked when the mutations are applied).
    pub fn put(mut self, put: Put) -> RowMutations {
        self.mutations.push(RowMutation::Put(put));
        self
    }

    /// Adds a delete (HBase's `add(Delete)`).
    pub fn delete(mut self, delete: Delete) -> RowMutations {
        self.mutations.push(RowMutation::Delete(delete));
        self
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mutations_keep_their_order_and_rows() {
        let m = RowMutations::new("r")
            .put(Put::new("r").add("f", "q", "v"))
            .delete(Delete::new("other"));
        assert_eq!(m.row, b"r");
        let rows: Vec<&[u8]> = m.mutations.iter().map(|x| x.row()).collect();
        assert_eq!(rows, vec![&b"r"[..], b"other"]);
        assert!(matches!(m.mutations[0], RowMutation::Put(_)));
        assert!(matches!(m.mutations[1], RowMutation::Delete(_)));
    }
}
