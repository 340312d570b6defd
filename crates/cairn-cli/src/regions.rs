//! `cairn regions`, `cairn split` and `cairn merge` on an embedded store: the HBase shell's
//! `list_regions`, `split` and `merge_region`, run against a data directory that no server
//! has open.

use std::process::ExitCode;

use anyhow::{Context, Result};
use cairn_region::{RegionServer, ServerConfig, TableName};
use clap::Args;

/// Where the store is and how it is configured.
#[derive(Args)]
pub struct StoreArgs {
    /// The data directory (`hbase.rootdir`): a local path, `file:///…` or `hdfs://…`.
    #[arg(long)]
    data: String,
    /// HBase properties of the embedded server, e.g. -D hbase.hregion.max.filesize=1073741824.
    #[arg(short = 'D', value_name = "KEY=VALUE")]
    properties: Vec<String>,
    /// HBase's configuration directory: its core-site.xml and hbase-site.xml give the
    /// server's properties as -D does, before the -Ds (--data wins over hbase.rootdir)
    /// [default: $HBASE_CONF_DIR].
    #[arg(long = "conf", value_name = "DIR")]
    conf: Option<std::path::PathBuf>,
}

impl StoreArgs {
    /// The server's configuration: the configuration directory's and the `-D` properties,
    /// read once (a tool that opens the store twice warns once).
    fn config(&self, tool: &str) -> Result<ServerConfig> {
        let reads = ServerConfig::reads_property;
        let site = crate::site::Site::load(tool, self.conf.as_deref(), &self.properties, reads)?;
        let mut c = ServerConfig::from_uri(&self.data)?;
        for p in site.read(reads)? {
            // --data says where the store is, whatever the files' hbase.rootdir says.
            if p.name == "hbase.rootdir" && p.source != "-D" {
                continue;
            }
            c.set_property(&p.name, &p.value)
                .with_context(|| p.origin())?;
        }
        // The tool's own change only: no background flushes, compactions or splits.
        c.background = false;
        Ok(c)
    }

    fn open(&self, c: &ServerConfig) -> Result<std::sync::Arc<RegionServer>> {
        RegionServer::open(c.clone()).with_context(|| format!("opening {}", self.data))
    }
}

/// `cairn regions --data DIR [TABLE]`.
#[derive(Args)]
pub struct RegionsArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Only this table's regions.
    table: Option<String>,
}

/// `cairn split --data DIR NAME [SPLIT_ROW]`.
#[derive(Args)]
pub struct SplitArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// A table (each region splits, at SPLIT_ROW's region only when given), or a region by
    /// its full or encoded name.
    name: String,
    /// Where to split; without it, each region splits where its split policy would (the
    /// middle key of its largest store file).
    split_row: Option<String>,
}

/// `cairn merge --data DIR REGION REGION`.
#[derive(Args)]
pub struct MergeArgs {
    #[command(flatten)]
    store: StoreArgs,
    /// Two adjacent regions of one table, by full or encoded name.
    #[arg(num_args = 2, required = true)]
    regions: Vec<String>,
}

fn print_regions(s: &RegionServer, only: Option<&TableName>) -> Result<()> {
    println!(
        "{:<20} {:<34} {:<20} {:<20} {:>12} {:>6}",
        "TABLE", "ENCODED NAME", "START KEY", "END KEY", "STORE BYTES", "FILES"
    );
    for name in s.table_names() {
        if only.is_some_and(|o| *o != name) {
            continue;
        }
        for r in &s.table(&name)?.regions {
            let bytes: u64 = r.stores().map(|st| st.files_size()).sum();
            let files: usize = r.stores().map(|st| st.file_count()).sum();
            let key = |k: &[u8]| cairn_cell::Escaped(k).to_string();
            println!(
                "{:<20} {:<34} {:<20} {:<20} {:>12} {:>6}",
                name.to_string(),
                r.info.encoded_name,
                key(&r.info.start_key),
                key(&r.info.end_key),
                bytes,
                files
            );
        }
    }
    Ok(())
}

/// Runs `cairn regions`.
pub fn run_regions(a: RegionsArgs) -> Result<ExitCode> {
    let c = a.store.config("regions")?;
    let s = a.store.open(&c)?;
    let only = a.table.as_deref().map(TableName::parse).transpose()?;
    if let Some(t) = &only {
        s.table(t)?;
    }
    print_regions(&s, only.as_ref())?;
    s.close()?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `cairn split`.
pub fn run_split(a: SplitArgs) -> Result<ExitCode> {
    let c = a.store.config("split")?;
    let s = a.store.open(&c)?;
    let row = a.split_row.as_deref().map(str::as_bytes);
    let table = TableName::parse(&a.name)
        .ok()
        .filter(|t| s.table(t).is_ok());
    let result = match &table {
        Some(t) => {
            let regions = s.table(t)?.regions.clone();
            let targets: Vec<_> = match row {
                Some(r) => regions
                    .into_iter()
                    .filter(|x| x.info.contains_row(r))
                    .collect(),
                None => regions,
            };
            let mut split = 0;
            let mut last_err = None;
            for r in targets {
                match s.split_region(r.info.encoded_name.as_bytes(), row) {
                    Ok(_) => split += 1,
                    Err(e) => {
                        eprintln!("cairn: {}: {e}", r.info.region_name());
                        last_err = Some(e);
                    }
                }
            }
            match (split, last_err) {
                (0, Some(e)) => Err(e.into()),
                _ => Ok(()),
            }
        }
        None => s
            .split_region(a.name.as_bytes(), row)
            .map(drop)
            .map_err(anyhow::Error::from),
    };
    let closed = s.close();
    drop(s);
    result?;
    closed?;
    let s = a.store.open(&c)?;
    print_regions(&s, table.as_ref())?;
    s.close()?;
    Ok(ExitCode::SUCCESS)
}

/// Runs `cairn merge`.
pub fn run_merge(a: MergeArgs) -> Result<ExitCode> {
    let c = a.store.config("merge")?;
    let s = a.store.open(&c)?;
    let merged = s.merge_regions(a.regions[0].as_bytes(), a.regions[1].as_bytes());
    let closed = s.close();
    drop(s);
    let merged = merged?;
    closed?;
    println!("merged into {}", merged.region_name());
    let s = a.store.open(&c)?;
    print_regions(&s, Some(&merged.table))?;
    s.close()?;
    Ok(ExitCode::SUCCESS)
}
