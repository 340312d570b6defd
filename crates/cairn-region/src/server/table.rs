//! A table's regions in key order, the one router from row to region, and scans across
//! the regions.

use super::*;

/// A loaded table: its schema and its regions, which together cover every row.
pub struct Table {
    /// The table's schema, shared with its regions.
    pub descriptor: Arc<TableDescriptor>,
    /// Sorted by start key; together they cover every row.
    pub regions: Vec<Arc<Region>>,
    pub(super) enabled: AtomicBool,
    pub(super) dir: PathBuf,
}

impl Table {
    /// Whether the table takes reads and writes (HBase's ENABLED state).
    pub fn is_enabled(&self) -> bool {
        self.enabled.load(Ordering::Acquire)
    }

    /// The region holding `row`.
    #[inline]
    pub fn region_for(&self, row: &[u8]) -> &Arc<Region> {
        &self.regions[self.region_index(row)]
    }

    /// Where the region holding `row` is in [`regions`](Self::regions): the last one whose
    /// start key is ≤ `row` (a region's start key is inclusive, its end key exclusive). The
    /// one router from row to region: gets, batches, scans and mutations all ask it.
    #[inline]
    pub fn region_index(&self, row: &[u8]) -> usize {
        if self.regions.len() == 1 {
            return 0;
        }
        self.regions
            .partition_point(|r| {
                cairn_hfile::cell::compare_bytes(&r.info.start_key, row)
                    != std::cmp::Ordering::Greater
            })
            .saturating_sub(1)
    }
}

/// Rows of a table across its regions.
pub struct TableScanner {
    table: Arc<Table>,
    template: Scan,
    /// Index of the region being scanned.
    region: usize,
    current: Option<RegionScanner>,
    rows: usize,
    done: bool,
}

impl TableScanner {
    pub(super) fn new(table: Arc<Table>, mut scan: Scan) -> Result<TableScanner> {
        let template = scan.clone_without_filter();
        let region = if scan.reversed && scan.start_row.is_empty() {
            table.regions.len() - 1
        } else {
            table.region_index(&scan.start_row)
        };
        let filter = scan.options.filter.take();
        let mut first = template.clone_without_filter();
        first.options.filter = filter;
        let current = Some(table.regions[region].scanner(first)?);
        Ok(TableScanner {
            table,
            template,
            region,
            current,
            rows: 0,
            done: false,
        })
    }

    /// The next row (or batch of one), `None` at the end.
    pub fn next_row(&mut self) -> Result<Option<Vec<KeyValue>>> {
        loop {
            if self.done {
                return Ok(None);
            }
            let Some(cur) = self.current.as_mut() else {
                self.done = true;
                continue;
            };
            if let Some(row) = cur.next_row()? {
                self.rows += 1;
                return Ok(Some(row));
            }
            let filter = cur.take_filter();
            let next = if self.template.reversed {
                self.region.checked_sub(1)
            } else {
                Some(self.region + 1).filter(|&i| i < self.table.regions.len())
            };
            let Some(next) = next else {
                self.done = true;
                continue;
            };
            let r = &self.table.regions[next];
            // Stop when the next region starts at or past the stop row.
            if !self.template.reversed
                && !self.template.stop_row.is_empty()
                && r.info.start_key >= self.template.stop_row
            {
                self.done = true;
                continue;
            }
            if self.template.reversed
                && !self.template.stop_row.is_empty()
                && !r.info.end_key.is_empty()
                && r.info.end_key <= self.template.stop_row
            {
                self.done = true;
                continue;
            }
            let mut s = self.template.clone_without_filter();
            s.options.filter = filter;
            if self.template.options.limit > 0 {
                if self.rows >= self.template.options.limit {
                    self.done = true;
                    continue;
                }
                s.options.limit = self.template.options.limit - self.rows;
            }
            if s.reversed {
                // Continue from the end of the previous region.
                s.start_row = Vec::new();
            }
            self.region = next;
            self.current = Some(r.scanner(s)?);
        }
    }

    /// Up to `n` rows (fewer only at the end of the scan): one round trip's worth for a server's
    /// scanner `next` call.
    pub fn next_rows(&mut self, n: usize) -> Result<Vec<Vec<KeyValue>>> {
        let mut out = Vec::new();
        while out.len() < n {
            match self.next_row()? {
                Some(r) => out.push(r),
                None => break,
            }
        }
        Ok(out)
    }
}

impl Iterator for TableScanner {
    type Item = Result<Vec<KeyValue>>;

    fn next(&mut self) -> Option<Self::Item> {
        self.next_row().transpose()
    }
}
