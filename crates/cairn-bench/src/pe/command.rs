//! PE's commands (those of `hbase pe` that have an embedded equivalent), by PE's names.

use std::fmt;
use std::str::FromStr;

/// A PE test, named on the command line as PE names it (`randomRead`, `scanRange100`, …).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PeCommand {
    /// Write rows in order, each client its own range.
    SequentialWrite,
    /// Write rows at random over the whole key space.
    RandomWrite,
    /// Get rows in order, each client its own range.
    SequentialRead,
    /// Get random rows (`--multiGet=N` batches them).
    RandomRead,
    /// Scan up to 120 rows from a random row (PageFilter(120) in a WhileMatchFilter).
    RandomSeekScan,
    /// One scanner per client from its first row, one row per step.
    Scan,
    /// Scan [random, random + 10).
    ScanRange10,
    /// Scan [random, random + 100).
    ScanRange100,
    /// Scan [random, random + 1000).
    ScanRange1000,
    /// Scan [random, random + 10000).
    ScanRange10000,
    /// A full-table scan per step with a SingleColumnValueFilter on a random value (use small
    /// --rows).
    FilterScan,
    /// Increment a counter in every row; clients overlap on the key space.
    Increment,
    /// Append the row key to a column of every row; clients overlap on the key space.
    Append,
    /// Put a value then check-and-put on it in every row; clients overlap on the key space.
    CheckAndPut,
}

impl PeCommand {
    /// Every command, in PE's usage order.
    pub const ALL: [PeCommand; 14] = [
        PeCommand::SequentialWrite,
        PeCommand::RandomWrite,
        PeCommand::SequentialRead,
        PeCommand::RandomRead,
        PeCommand::RandomSeekScan,
        PeCommand::Scan,
        PeCommand::ScanRange10,
        PeCommand::ScanRange100,
        PeCommand::ScanRange1000,
        PeCommand::ScanRange10000,
        PeCommand::FilterScan,
        PeCommand::Increment,
        PeCommand::Append,
        PeCommand::CheckAndPut,
    ];

    /// The command's name on the command line (PE's).
    pub fn name(self) -> &'static str {
        match self {
            PeCommand::SequentialWrite => "sequentialWrite",
            PeCommand::RandomWrite => "randomWrite",
            PeCommand::SequentialRead => "sequentialRead",
            PeCommand::RandomRead => "randomRead",
            PeCommand::RandomSeekScan => "randomSeekScan",
            PeCommand::Scan => "scan",
            PeCommand::ScanRange10 => "scanRange10",
            PeCommand::ScanRange100 => "scanRange100",
            PeCommand::ScanRange1000 => "scanRange1000",
            PeCommand::ScanRange10000 => "scanRange10000",
            PeCommand::FilterScan => "filterScan",
            PeCommand::Increment => "increment",
            PeCommand::Append => "append",
            PeCommand::CheckAndPut => "checkAndPut",
        }
    }

    /// One line on what the command does, for help text.
    pub fn description(self) -> &'static str {
        match self {
            PeCommand::SequentialWrite => "Write rows in order, each client its own range",
            PeCommand::RandomWrite => "Write rows at random over the whole key space",
            PeCommand::SequentialRead => "Get rows in order, each client its own range",
            PeCommand::RandomRead => "Get random rows (--multiGet=N batches them)",
            PeCommand::RandomSeekScan => "Scan up to 120 rows from a random row",
            PeCommand::Scan => "One scanner per client from its first row, a row per step",
            PeCommand::ScanRange10 => "Scan [random, random + 10)",
            PeCommand::ScanRange100 => "Scan [random, random + 100)",
            PeCommand::ScanRange1000 => "Scan [random, random + 1000)",
            PeCommand::ScanRange10000 => "Scan [random, random + 10000)",
            PeCommand::FilterScan => {
                "A full-table scan per step with a SingleColumnValueFilter (use small --rows)"
            }
            PeCommand::Increment => "Increment a counter in every row; clients overlap",
            PeCommand::Append => "Append the row key to a column of every row; clients overlap",
            PeCommand::CheckAndPut => "Put, then check-and-put, every row; clients overlap",
        }
    }

    /// PE's test class, as its reports name it.
    pub fn class_name(self) -> &'static str {
        match self {
            PeCommand::SequentialWrite => "SequentialWriteTest",
            PeCommand::RandomWrite => "RandomWriteTest",
            PeCommand::SequentialRead => "SequentialReadTest",
            PeCommand::RandomRead => "RandomReadTest",
            PeCommand::RandomSeekScan => "RandomSeekScanTest",
            PeCommand::Scan => "ScanTest",
            PeCommand::ScanRange10 => "RandomScanWithRange10Test",
            PeCommand::ScanRange100 => "RandomScanWithRange100Test",
            PeCommand::ScanRange1000 => "RandomScanWithRange1000Test",
            PeCommand::ScanRange10000 => "RandomScanWithRange10000Test",
            PeCommand::FilterScan => "FilteredScanTest",
            PeCommand::Increment => "IncrementTest",
            PeCommand::Append => "AppendTest",
            PeCommand::CheckAndPut => "CheckAndPutTest",
        }
    }

    /// PE's `CASTableTest`s: every client works rows `0..rows`.
    pub fn is_cas(self) -> bool {
        matches!(
            self,
            PeCommand::Increment | PeCommand::Append | PeCommand::CheckAndPut
        )
    }

    /// PE's `checkTable`: a command whose name contains "read" or "scan" needs data.
    pub fn is_read(self) -> bool {
        let n = self.name().to_ascii_lowercase();
        n.contains("read") || n.contains("scan")
    }

    /// Rows a `scanRangeN` command scans (0 for the others).
    pub(crate) fn scan_range(self) -> u64 {
        match self {
            PeCommand::ScanRange10 => 10,
            PeCommand::ScanRange100 => 100,
            PeCommand::ScanRange1000 => 1000,
            PeCommand::ScanRange10000 => 10000,
            _ => 0,
        }
    }
}

impl fmt::Display for PeCommand {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

impl FromStr for PeCommand {
    type Err = String;

    /// PE's name, exactly (PE's command table is case-sensitive).
    fn from_str(s: &str) -> Result<PeCommand, String> {
        PeCommand::ALL
            .into_iter()
            .find(|c| c.name() == s)
            .ok_or_else(|| format!("{s}: not a PE command"))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn read_and_cas_commands() {
        assert!(PeCommand::RandomRead.is_read());
        assert!(PeCommand::ScanRange100.is_read());
        assert!(PeCommand::FilterScan.is_read());
        assert!(!PeCommand::RandomWrite.is_read());
        assert!(!PeCommand::Increment.is_read());
        assert!(PeCommand::CheckAndPut.is_cas());
        assert_eq!(PeCommand::CheckAndPut.name(), "checkAndPut");
    }

    #[test]
    fn names_round_trip() {
        for c in PeCommand::ALL {
            assert_eq!(c.name().parse::<PeCommand>(), Ok(c));
        }
        assert!("randomread".parse::<PeCommand>().is_err());
    }
}
