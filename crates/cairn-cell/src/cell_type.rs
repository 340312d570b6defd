//! The type of a cell (`KeyValue.Type`): the last byte of every key.

/// The type of a cell (`KeyValue.Type`), ordered in a file from `Maximum` down to `Minimum`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u8)]
pub enum CellType {
    /// Sorts after every real cell of its row/column; used by searches.
    Minimum = 0,
    /// A value.
    Put = 4,
    /// Deletes one version of a column.
    Delete = 8,
    /// Deletes one version of every column of a family.
    DeleteFamilyVersion = 10,
    /// Deletes all versions of a column up to a timestamp.
    DeleteColumn = 12,
    /// Deletes all columns of a family up to a timestamp.
    DeleteFamily = 14,
    /// Sorts before every real cell of its row/column; used by searches and index keys.
    Maximum = 255,
}

impl CellType {
    /// The type for a code, if it is one of HBase's.
    pub fn from_code(code: u8) -> Option<CellType> {
        Some(match code {
            0 => CellType::Minimum,
            4 => CellType::Put,
            8 => CellType::Delete,
            10 => CellType::DeleteFamilyVersion,
            12 => CellType::DeleteColumn,
            14 => CellType::DeleteFamily,
            255 => CellType::Maximum,
            _ => return None,
        })
    }

    /// The code stored in keys.
    pub fn code(self) -> u8 {
        self as u8
    }

    /// HBase's name for the type.
    pub fn name(self) -> &'static str {
        match self {
            CellType::Minimum => "Minimum",
            CellType::Put => "Put",
            CellType::Delete => "Delete",
            CellType::DeleteFamilyVersion => "DeleteFamilyVersion",
            CellType::DeleteColumn => "DeleteColumn",
            CellType::DeleteFamily => "DeleteFamily",
            CellType::Maximum => "Maximum",
        }
    }
}
