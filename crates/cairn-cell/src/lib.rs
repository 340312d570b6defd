//! # cairn-cell
//!
//! HBase's cell model, shared by everything that holds or orders cells.
//!
//! **Owns:** the cell views ([`KeyValue`] owned, [`CellRef`] and [`KeyRef`] borrowed), the
//! cell types ([`CellType`]), the serialized key layout (`rowLength u16 | row | familyLength
//! u8 | family | qualifier | timestamp i64 | type u8`, big-endian, as HBase's `KeyValue`) with
//! its limits and search keys ([`make_key`], [`first_on_row`], [`last_on_row`]...), and
//! HBase's cell order (`CellComparatorImpl`: [`compare_keys`], [`compare_cells`],
//! [`compare_bytes`]; `hbase:meta`'s `MetaCellComparator`: [`compare_meta_keys`],
//! [`compare_meta_rows`]).
//!
//! **Does not own:** how cells are laid out in an HFile data block or encoded there (the HFile
//! crate), how a WAL frames them (the WAL crate), or what a cell means for reads (versions,
//! deletes, TTL: the region store).

#![warn(missing_docs)]

mod cell_ref;
mod cell_type;
mod compare;
mod error;
mod escaped;
mod key;
mod key_value;

pub use cell_ref::CellRef;
pub use cell_type::CellType;
pub use compare::{
    compare_bytes, compare_cells, compare_key_bytes, compare_keys, compare_meta_keys,
    compare_meta_rows, same_bytes,
};
pub use error::CellError;
pub use escaped::Escaped;
pub use key::{
    first_on_row, first_on_row_col, last_on_row, make_key, write_key, KeyRef, KEY_INFRASTRUCTURE,
    LATEST_TIMESTAMP, MAX_FAMILY_LEN, MAX_ROW_LEN,
};
pub use key_value::{KeyValue, MAX_TAGS_LEN};
