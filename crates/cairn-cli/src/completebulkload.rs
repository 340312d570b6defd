//! `cairn completebulkload`: HBase's BulkLoadHFilesTool (`hbase completebulkload DIR TABLE`)
//! on an embedded store or a running server (over HBase's native RPC). Walks `DIR/<family>/<hfile>`, groups the files by the region their
//! rows fall in, splits a file that spans a region boundary into `.tmp/<uuid>.bottom` and
//! `.top` halves (again, until every piece fits one region), and hands each region its files
//! in one atomic load with a sequence id assigned.

use std::collections::{BTreeMap, VecDeque};
use std::path::{Path, PathBuf};
use std::process::ExitCode;

use anyhow::{anyhow, bail, Context, Result};
use cairn_cell::first_on_row;
use cairn_hfile::file_info::keys;
use cairn_hfile::{HFileReader, HFileWriter, ReaderOptions};
use cairn_region::tools::layout::{decode_region_info_bytes, decode_table_descriptor};
// HBase's HFILE_NAME_REGEX, as the region store reads store file names.
use cairn_region::region::hfile_row_range;
use cairn_region::tools::is_hfile_name as is_hfile;
use cairn_region::tools::writer_options;
use cairn_region::{
    ColumnFamilyDescriptor, RegionInfo, RegionServer, ServerConfig, TableDescriptor, TableName,
};
use cairn_rpc::client::{meta_region_infos, RpcClient};
use cairn_rpc::pb;
use clap::Args;

const AFTER_HELP: &str = "\
DIR holds one directory per column family, each with HFiles (ImportTsv's or HFileOutputFormat2's
bulk output; cairn's or HBase's writer). Names starting with '_' or '.', reference and HFileLink
names, and files that are not HFiles are skipped. The files are MOVED into the table's regions.

Properties (-D, HBase's names): always.copy.files=true (copy instead of moving),
hbase.mapreduce.bulkload.assign.sequenceNumbers=false (keep the files' own sequence ids: loaded
cells then lose to existing cells of the same timestamp), ignore.unmatched.families=yes,
hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily=N (32),
hbase.loadincremental.validate.hfile=false, hbase.bulkload.retries.number=N (10),
hbase.loadincremental.fail.if.need.split.hfile=true (fail instead of splitting).

Where: --data ROOT loads into an embedded store no server has open; --hbase HOST:PORT loads
into a running server (cairn serve, or an HBase region server) over HBase's native RPC:
PrepareBulkLoad, one BulkLoadHFile per region, CleanupBulkLoad. The server must be able to
read DIR's files at the paths given (the same machine, or a shared filesystem), and a cairn
serve must list DIR in cairn.bulkload.source.dirs. HBase's own tool works against cairn serve too: `hbase org.apache.hadoop.hbase.tool.BulkLoadHFilesTool DIR
TABLE` with hbase.client.bootstrap.servers pointing at cairn's HBase RPC port.";

/// `cairn completebulkload [-D k=v]... (--data ROOT | --hbase HOST:PORT) DIR TABLE`.
#[derive(Args)]
#[command(after_help = AFTER_HELP)]
pub struct CompleteBulkLoadArgs {
    /// An embedded store's root directory (hbase.rootdir): local path, `file:///…` or
    /// `hdfs://…`.
    #[arg(
        long = "data",
        value_name = "ROOT",
        required_unless_present = "hbase",
        conflicts_with = "hbase"
    )]
    data: Option<String>,
    /// A running server's native RPC address (`cairn serve`'s --hbase, HBase's port 16020).
    #[arg(long = "hbase", value_name = "HOST:PORT")]
    hbase: Option<String>,
    /// HBase properties, e.g. -D always.copy.files=true.
    #[arg(short = 'D', value_name = "KEY=VALUE")]
    properties: Vec<String>,
    /// HBase's configuration directory: its core-site.xml and hbase-site.xml give properties
    /// as -D does, before the -Ds [default: $HBASE_CONF_DIR].
    #[arg(long = "conf", value_name = "DIR")]
    conf: Option<PathBuf>,
    /// The bulk output directory: `<family>/<hfile>`.
    dir: PathBuf,
    /// The table (`ns:name` or `name`).
    table: String,
}

/// The tool's settings, from HBase's property names.
#[derive(Clone, Debug)]
struct Options {
    copy: bool,
    assign_seq_num: bool,
    ignore_unmatched: bool,
    max_files_per_region_per_family: usize,
    validate: bool,
    retries: usize,
    fail_if_split: bool,
    /// `create.table` ("yes" by default, as in HBase): a missing table is created with the
    /// directory's families and split keys inferred from the files' row ranges.
    create_table: bool,
}

impl Default for Options {
    fn default() -> Self {
        Options {
            copy: false,
            assign_seq_num: true,
            ignore_unmatched: false,
            max_files_per_region_per_family: 32,
            validate: true,
            retries: 10,
            fail_if_split: false,
            create_table: true,
        }
    }
}

/// Every name [`Options::parse`] reads.
const KNOWN: &[&str] = &[
    "always.copy.files",
    "hbase.mapreduce.bulkload.assign.sequenceNumbers",
    "ignore.unmatched.families",
    "hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily",
    "hbase.loadincremental.validate.hfile",
    "hbase.bulkload.retries.number",
    "hbase.loadincremental.fail.if.need.split.hfile",
    "create.table",
];

/// Whether completebulkload reads `name`.
fn reads(name: &str) -> bool {
    KNOWN.contains(&name)
}

fn parse_bool(p: &crate::site::Property) -> Result<bool> {
    match p.value.trim().to_ascii_lowercase().as_str() {
        "true" | "yes" => Ok(true),
        "false" | "no" => Ok(false),
        _ => bail!("{}: expected true or false", p.origin()),
    }
}

impl Options {
    /// The tool's settings from `properties` (names it does not read are skipped).
    fn parse(properties: &[crate::site::Property]) -> Result<Options> {
        let mut o = Options::default();
        for p in properties {
            let v = p.value.as_str();
            match p.name.as_str() {
                "always.copy.files" => o.copy = parse_bool(p)?,
                "hbase.mapreduce.bulkload.assign.sequenceNumbers" => {
                    o.assign_seq_num = parse_bool(p)?
                }
                // HBase compares with "yes" (case-insensitively).
                "ignore.unmatched.families" => o.ignore_unmatched = v.eq_ignore_ascii_case("yes"),
                "hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily" => {
                    o.max_files_per_region_per_family =
                        v.trim().parse().with_context(|| p.origin())?
                }
                "hbase.loadincremental.validate.hfile" => o.validate = parse_bool(p)?,
                "hbase.bulkload.retries.number" => {
                    o.retries = v.trim().parse().with_context(|| p.origin())?
                }
                "hbase.loadincremental.fail.if.need.split.hfile" => {
                    o.fail_if_split = parse_bool(p)?
                }
                // HBase compares with "yes" (case-insensitively).
                "create.table" => o.create_table = v.eq_ignore_ascii_case("yes"),
                _ => {}
            }
        }
        Ok(o)
    }
}

/// The table HBase's tool creates for a directory (`BulkLoadHFilesTool.createTable`): one
/// family per family directory, with the compression of its files, and split keys where the
/// files' row ranges leave gaps between them (`inferBoundaries`).
fn inferred_table(
    table: &TableName,
    items: &VecDeque<Item>,
) -> Result<(TableDescriptor, Vec<Vec<u8>>)> {
    let mut descriptor = TableDescriptor::new(table.clone());
    // +1 where a file's first row is, -1 where a file's last row is.
    let mut edges: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
    for item in items {
        let reader = HFileReader::open(&item.path, ReaderOptions::default())
            .with_context(|| format!("reading {}", item.path.display()))?;
        let family = match descriptor
            .families
            .iter_mut()
            .find(|f| f.name == item.family)
        {
            Some(f) => f,
            None => {
                descriptor
                    .families
                    .push(ColumnFamilyDescriptor::new(&item.family));
                descriptor.families.last_mut().expect("just pushed")
            }
        };
        family.compression = reader.trailer().compression;
        if let Some((first, last)) = hfile_row_range(&reader)? {
            *edges.entry(first).or_default() += 1;
            *edges.entry(last).or_default() -= 1;
        }
    }
    Ok((descriptor, infer_boundaries(&edges)))
}

/// HBase's `inferBoundaries`: walking the rows in order with a running count of open files,
/// each row where a new group of overlapping files starts (after the first group) is a split.
fn infer_boundaries(edges: &BTreeMap<Vec<u8>, i64>) -> Vec<Vec<u8>> {
    let mut keys = Vec::new();
    let mut running = 0i64;
    let mut start: Option<&Vec<u8>> = None;
    let mut first = true;
    for (row, delta) in edges {
        if running == 0 {
            start = Some(row);
        }
        running += delta;
        if running == 0 {
            if !first {
                keys.push(start.expect("set when running was 0").clone());
            }
            first = false;
        }
    }
    keys
}

/// One file waiting to be loaded.
#[derive(Clone, Debug)]
struct Item {
    family: Vec<u8>,
    path: PathBuf,
}

/// What a run did.
#[derive(Debug, Default, PartialEq, Eq)]
struct Report {
    /// Files (whole or split pieces) loaded.
    pub files_loaded: usize,
    /// Files split because they spanned a region boundary (each split counted).
    pub splits: usize,
    /// Regions that took files.
    pub regions: usize,
    /// Files skipped while walking the directory.
    pub skipped: Vec<String>,
}

/// Runs the tool: exit 0 when files were loaded, 1 when none were (as HBase's tool), 2 on
/// bad usage.
pub fn run(a: CompleteBulkLoadArgs) -> Result<ExitCode> {
    let site = crate::site::Site::load("completebulkload", a.conf.as_deref(), &a.properties, reads)
        .and_then(|s| s.read(reads));
    let options = match site.and_then(|props| Options::parse(&props)) {
        Ok(o) => o,
        Err(e) => return Ok(crate::usage_error("completebulkload", &e)),
    };
    let table = match TableName::parse(&a.table) {
        Ok(t) => t,
        Err(e) => {
            return Ok(crate::usage_error(
                "completebulkload",
                &anyhow::Error::from(e),
            ))
        }
    };
    let report = match (&a.data, &a.hbase) {
        (Some(data), _) => {
            let mut config = ServerConfig::from_uri(data)?;
            config.background = false;
            // The operator's own files: the embedded store may read them where they are.
            config
                .bulk_load_source_dirs
                .push(std::fs::canonicalize(&a.dir).unwrap_or_else(|_| a.dir.clone()));
            let rs = RegionServer::open(config).with_context(|| format!("opening {data}"))?;
            let result = load(&mut Embedded(&rs), &a.dir, &table, &options);
            rs.close().context("closing the store")?;
            result?
        }
        (None, Some(addr)) => {
            let mut target = Remote {
                addr: addr.clone(),
                table: table_name_pb(&table),
                client: None,
                token: None,
            };
            let result = load(&mut target, &a.dir, &table, &options);
            let cleaned = target.cleanup();
            let report = result?;
            cleaned?;
            report
        }
        (None, None) => bail!("--data or --hbase is needed"),
    };
    for s in &report.skipped {
        tracing::info!("skipped {s}");
    }
    println!(
        "completebulkload: {} file(s) loaded into {} region(s) of {table}; {} split(s)",
        report.files_loaded, report.regions, report.splits
    );
    // As HBase's tool: success only if something was loaded.
    Ok(if report.files_loaded > 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}

/// A table as the loader sees it: its schema and its regions in key order.
struct Layout {
    descriptor: TableDescriptor,
    regions: Vec<RegionInfo>,
}

impl Layout {
    /// The region holding `row`: the last whose start key is at or before it.
    fn region_index(&self, row: &[u8]) -> usize {
        self.regions
            .partition_point(|r| r.start_key.as_slice() <= row)
            .saturating_sub(1)
    }
}

/// Where the files go.
trait Target {
    /// The table's schema and regions as they are now (read again each round, as HBase's
    /// tool does: regions may split meanwhile).
    fn layout(&mut self, table: &TableName) -> Result<Layout>;
    /// Whether the table exists.
    fn exists(&mut self, table: &TableName) -> Result<bool>;
    /// Creates the table with these split keys, and returns once its regions are open.
    fn create(&mut self, descriptor: TableDescriptor, split_keys: &[Vec<u8>]) -> Result<()>;
    /// Loads one region's files at once; `false` when they no longer fit it.
    fn load(
        &mut self,
        region: &RegionInfo,
        paths: &[(Vec<u8>, PathBuf)],
        o: &Options,
    ) -> Result<bool>;
}

/// An embedded store.
struct Embedded<'a>(&'a RegionServer);

impl Target for Embedded<'_> {
    fn layout(&mut self, table: &TableName) -> Result<Layout> {
        let t = self
            .0
            .table(table)
            .map_err(|_| anyhow!("Table '{table}' does not exist."))?;
        Ok(Layout {
            descriptor: (*t.descriptor).clone(),
            regions: t.regions.iter().map(|r| r.info.clone()).collect(),
        })
    }

    fn exists(&mut self, table: &TableName) -> Result<bool> {
        Ok(self.0.table(table).is_ok())
    }

    fn create(&mut self, descriptor: TableDescriptor, split_keys: &[Vec<u8>]) -> Result<()> {
        Ok(self.0.create_table(descriptor, split_keys)?)
    }

    fn load(
        &mut self,
        region: &RegionInfo,
        paths: &[(Vec<u8>, PathBuf)],
        o: &Options,
    ) -> Result<bool> {
        Ok(self
            .0
            .bulk_load_hfiles(&region.region_name_bytes(), paths, o.assign_seq_num, o.copy)?)
    }
}

/// A running server over HBase's native RPC, loading through a staging token as HBase's
/// tool does.
struct Remote {
    addr: String,
    table: pb::TableName,
    client: Option<RpcClient>,
    /// PrepareBulkLoad's token, and the region it was asked of (CleanupBulkLoad's too).
    token: Option<(String, Vec<u8>)>,
}

fn table_name_pb(t: &TableName) -> pb::TableName {
    pb::TableName {
        namespace: t.namespace.as_bytes().to_vec(),
        qualifier: t.qualifier.as_bytes().to_vec(),
    }
}

fn region_spec(name: Vec<u8>) -> pb::RegionSpecifier {
    pb::RegionSpecifier {
        r#type: pb::region_specifier::RegionSpecifierType::RegionName as i32,
        value: name,
    }
}

impl Remote {
    fn client(&mut self) -> Result<&mut RpcClient> {
        if self.client.is_none() {
            self.client = Some(RpcClient::connect(&self.addr, "ClientService")?);
        }
        Ok(self.client.as_mut().expect("just set"))
    }

    /// CleanupBulkLoad, when PrepareBulkLoad ran.
    fn cleanup(&mut self) -> Result<()> {
        let Some((token, region)) = self.token.take() else {
            return Ok(());
        };
        let req = pb::CleanupBulkLoadRequest {
            bulk_token: token,
            region: Some(region_spec(region)),
        };
        self.client()?
            .call::<pb::CleanupBulkLoadResponse>("CleanupBulkLoad", &req)?;
        Ok(())
    }
}

impl Target for Remote {
    fn exists(&mut self, _table: &TableName) -> Result<bool> {
        let mut master = RpcClient::connect(&self.addr, "MasterService")?;
        let req = pb::GetTableDescriptorsRequest {
            table_names: vec![self.table.clone()],
            ..Default::default()
        };
        let answer = master.call::<pb::GetTableDescriptorsResponse>("GetTableDescriptors", &req);
        match answer {
            Ok(a) => Ok(!a.message.table_schema.is_empty()),
            Err(cairn_rpc::client::ClientError::Remote { class, .. })
                if class.ends_with("TableNotFoundException") =>
            {
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }

    fn create(&mut self, descriptor: TableDescriptor, split_keys: &[Vec<u8>]) -> Result<()> {
        // The schema as the table's `.tableinfo` carries it, which is CreateTable's TableSchema.
        let bytes = cairn_region::tools::layout::encode_table_descriptor(&descriptor);
        let table_schema: pb::TableSchema =
            prost::Message::decode(&bytes[4..]).context("encoding the table's schema")?;
        let req = pb::CreateTableRequest {
            table_schema,
            split_keys: split_keys.to_vec(),
            ..Default::default()
        };
        let mut master = RpcClient::connect(&self.addr, "MasterService")?;
        master.call::<pb::CreateTableResponse>("CreateTable", &req)?;
        // HBase's master answers before the regions are open: wait until meta lists them all.
        let want = split_keys.len() + 1;
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
        loop {
            match self.layout(&descriptor.name) {
                Ok(l) if l.regions.len() >= want => return Ok(()),
                _ if std::time::Instant::now() > deadline => bail!(
                    "Table '{}' was created but its {want} regions did not all open within 60 s",
                    descriptor.name
                ),
                _ => std::thread::sleep(std::time::Duration::from_millis(200)),
            }
        }
    }

    fn layout(&mut self, table: &TableName) -> Result<Layout> {
        let mut master = RpcClient::connect(&self.addr, "MasterService")?;
        let req = pb::GetTableDescriptorsRequest {
            table_names: vec![self.table.clone()],
            ..Default::default()
        };
        let schema = master
            .call::<pb::GetTableDescriptorsResponse>("GetTableDescriptors", &req)?
            .message
            .table_schema
            .into_iter()
            .next()
            .ok_or_else(|| anyhow!("Table '{table}' does not exist."))?;
        let mut bytes = b"PBUF".to_vec();
        prost::Message::encode(&schema, &mut bytes).expect("vec grows");
        let descriptor = decode_table_descriptor(&bytes, Path::new("GetTableDescriptors"))?;
        let mut regions = Vec::new();
        for b in meta_region_infos(&self.addr, &self.table)? {
            let r = decode_region_info_bytes(&b, Path::new("hbase:meta info:regioninfo"))?;
            if !r.offline && !r.split && r.table == *table {
                regions.push(r);
            }
        }
        regions.sort_by(|a, b| a.start_key.cmp(&b.start_key));
        if regions.is_empty() {
            bail!(
                "Table '{table}' has no regions in hbase:meta on {}",
                self.addr
            );
        }
        Ok(Layout {
            descriptor,
            regions,
        })
    }

    fn load(
        &mut self,
        region: &RegionInfo,
        paths: &[(Vec<u8>, PathBuf)],
        o: &Options,
    ) -> Result<bool> {
        if self.token.is_none() {
            // As HBase's tool: the token is asked of the table's first region.
            let first = self.layout(&region.table)?.regions[0].region_name_bytes();
            let req = pb::PrepareBulkLoadRequest {
                table_name: self.table.clone(),
                region: Some(region_spec(first.clone())),
            };
            let token = self
                .client()?
                .call::<pb::PrepareBulkLoadResponse>("PrepareBulkLoad", &req)?
                .message
                .bulk_token;
            self.token = Some((token, first));
        }
        let token = self.token.as_ref().map(|t| t.0.clone());
        let mut family_path = Vec::new();
        for (family, path) in paths {
            // The server opens the files by these paths.
            let abs = std::fs::canonicalize(path)
                .with_context(|| format!("resolving {}", path.display()))?;
            family_path.push(pb::bulk_load_h_file_request::FamilyPath {
                family: family.clone(),
                path: abs.display().to_string(),
            });
        }
        let req = pb::BulkLoadHFileRequest {
            region: region_spec(region.region_name_bytes()),
            family_path,
            assign_seq_num: Some(o.assign_seq_num),
            bulk_token: token,
            copy_file: Some(o.copy),
            ..Default::default()
        };
        let answer = self
            .client()?
            .call::<pb::BulkLoadHFileResponse>("BulkLoadHFile", &req);
        match answer {
            Ok(a) => Ok(a.message.loaded),
            // The region split or moved meanwhile: the files go round again.
            Err(cairn_rpc::client::ClientError::Remote { class, .. })
                if class.ends_with("NotServingRegionException")
                    || class.ends_with("WrongRegionException") =>
            {
                Ok(false)
            }
            Err(e) => Err(e.into()),
        }
    }
}

/// Loads `dir` into `table` of `target`.
fn load(target: &mut dyn Target, dir: &Path, table: &TableName, o: &Options) -> Result<Report> {
    let mut report = Report::default();
    let mut queue = discover(dir, o.validate, &mut report.skipped)?;
    if !target.exists(table)? {
        if !o.create_table {
            bail!("Table '{table}' does not exist.");
        }
        let (descriptor, split_keys) = inferred_table(table, &queue)?;
        tracing::info!(
            "completebulkload: creating table {table} with families [{}] and {} split key(s) \
             inferred from the files (create.table=yes)",
            descriptor
                .families
                .iter()
                .map(|f| String::from_utf8_lossy(&f.name).into_owned())
                .collect::<Vec<_>>()
                .join(", "),
            split_keys.len()
        );
        target.create(descriptor, &split_keys)?;
    }
    let first = target.layout(table)?;
    check_families(&first.descriptor, &mut queue, o.ignore_unmatched)?;
    let max_attempts = if o.retries == 0 {
        usize::MAX
    } else {
        o.retries.max(first.regions.len() + 1)
    };
    let mut attempt = 0;
    let mut touched = std::collections::BTreeSet::new();
    while !queue.is_empty() {
        attempt += 1;
        if attempt > max_attempts {
            bail!("Retry attempted {max_attempts} times without completing, bailing out");
        }
        let t = target.layout(table)?;
        let groups = group_or_split(&t, &mut queue, o, &mut report.splits)?;
        for (region_idx, items) in groups {
            let mut per_family: BTreeMap<&[u8], usize> = BTreeMap::new();
            for it in &items {
                *per_family.entry(&it.family).or_default() += 1;
            }
            if per_family
                .values()
                .any(|n| *n > o.max_files_per_region_per_family)
            {
                bail!(
                    "Trying to load more than {} hfiles to one family of one region",
                    o.max_files_per_region_per_family
                );
            }
            let region = &t.regions[region_idx];
            let paths: Vec<(Vec<u8>, PathBuf)> = items
                .iter()
                .map(|i| (i.family.clone(), i.path.clone()))
                .collect();
            let loaded = target.load(region, &paths, o).with_context(|| {
                format!(
                    "BulkLoad encountered an unrecoverable problem loading into {}",
                    region.region_name()
                )
            })?;
            if loaded {
                report.files_loaded += items.len();
                touched.insert(region.encoded_name.clone());
            } else {
                tracing::warn!(
                    "Attempt to bulk load region {} of table {table} failed. This is \
                     recoverable and they will be retried.",
                    region.region_name()
                );
                queue.extend(items);
            }
        }
    }
    report.regions = touched.len();
    Ok(report)
}

/// HBase's `StoreFileInfo.isReference`: `<hfile or link>.<parent encoded region>`.
fn is_reference(name: &str) -> bool {
    name.split_once('.')
        .is_some_and(|(file, parent)| !file.is_empty() && !parent.is_empty() && is_hfile(file))
}

/// An HFileLink name: `[<ns>=]<table>=<region>-<hfile>`.
fn is_hfile_link(name: &str) -> bool {
    name.contains('=')
        && name
            .rsplit_once('-')
            .is_some_and(|(_, hfile)| is_hfile(hfile))
}

/// The entries of `dir`, in name order.
fn sorted_entries(dir: &Path) -> Result<Vec<PathBuf>> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .and_then(|rd| rd.map(|e| e.map(|e| e.path())).collect())
        .with_context(|| format!("reading {}", dir.display()))?;
    out.sort();
    Ok(out)
}

/// Walks `dir/<family>/<file>` as HBase's tool does.
fn discover(dir: &Path, validate: bool, skipped: &mut Vec<String>) -> Result<VecDeque<Item>> {
    let mut out = VecDeque::new();
    for fdir in sorted_entries(dir)? {
        let fname = fdir
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default();
        if !fdir.is_dir() {
            skipped.push(format!("{}: Skipping non-directory", fdir.display()));
            continue;
        }
        // Not a legal family name (`_SUCCESS`, `.tmp`, `_logs`).
        if fname.starts_with('_') || fname.starts_with('.') {
            skipped.push(format!("{}: not a family directory", fdir.display()));
            continue;
        }
        for p in sorted_entries(&fdir)? {
            let name = p
                .file_name()
                .map(|n| n.to_string_lossy().into_owned())
                .unwrap_or_default();
            if !p.is_file() {
                continue;
            }
            if name.starts_with('_') || name.starts_with('.') {
                skipped.push(format!("{}: name starts with '_' or '.'", p.display()));
                continue;
            }
            if is_reference(&name) || is_hfile_link(&name) {
                skipped.push(format!("{}: a reference or HFileLink", p.display()));
                continue;
            }
            if validate && HFileReader::open(&p, ReaderOptions::default()).is_err() {
                skipped.push(format!("{}: not an HFile", p.display()));
                continue;
            }
            out.push_back(Item {
                family: fname.as_bytes().to_vec(),
                path: p,
            });
        }
    }
    Ok(out)
}

/// HBase's family check: files of families the table lacks fail the run, or are dropped with
/// `ignore.unmatched.families=yes`.
fn check_families(
    descriptor: &TableDescriptor,
    queue: &mut VecDeque<Item>,
    ignore: bool,
) -> Result<()> {
    let valid: Vec<String> = descriptor
        .families
        .iter()
        .map(|f| String::from_utf8_lossy(&f.name).into_owned())
        .collect();
    let mut unmatched: Vec<String> = queue
        .iter()
        .map(|i| String::from_utf8_lossy(&i.family).into_owned())
        .filter(|f| !valid.contains(f))
        .collect();
    unmatched.dedup();
    if unmatched.is_empty() {
        return Ok(());
    }
    let msg = format!(
        "Unmatched family names found: unmatched family names in HFiles to be bulkloaded: \
         [{}]; valid family names of table {} are: [{}]",
        unmatched.join(", "),
        descriptor.name,
        valid.join(", ")
    );
    if !ignore {
        bail!(msg);
    }
    tracing::warn!("{msg}");
    queue.retain(|i| valid.contains(&String::from_utf8_lossy(&i.family).into_owned()));
    Ok(())
}

/// HBase's groupOrSplitPhase: each queued file either goes to the group of the region its
/// rows fall in, or is split at a region end key and its halves queued again at the front.
fn group_or_split(
    t: &Layout,
    queue: &mut VecDeque<Item>,
    o: &Options,
    splits: &mut usize,
) -> Result<BTreeMap<usize, Vec<Item>>> {
    let mut groups: BTreeMap<usize, Vec<Item>> = BTreeMap::new();
    while let Some(item) = queue.pop_front() {
        let reader = HFileReader::open(&item.path, ReaderOptions::default())
            .with_context(|| format!("opening {}", item.path.display()))?;
        let Some((first, last)) = hfile_row_range(&reader)? else {
            tracing::info!("{} has no entries, skipping", item.path.display());
            continue;
        };
        if first > last {
            bail!(
                "Invalid range: {} > {} in {}",
                cairn_cell::Escaped(&first),
                cairn_cell::Escaped(&last),
                item.path.display()
            );
        }
        let first_idx = t.region_index(&first);
        let end = &t.regions[first_idx].end_key;
        if end.is_empty() || last < *end {
            groups.entry(first_idx).or_default().push(item);
            continue;
        }
        if o.fail_if_split {
            bail!(
                "The HFile {} needs to be split: it spans regions of {}",
                item.path.display(),
                t.descriptor.name
            );
        }
        let last_idx = t.region_index(&last);
        let split_point = t.regions[(first_idx + last_idx) / 2].end_key.clone();
        tracing::info!(
            "HFile at {} no longer fits inside a single region. Splitting at {}",
            item.path.display(),
            cairn_cell::Escaped(&split_point)
        );
        let family = t
            .descriptor
            .families
            .iter()
            .find(|f| f.name == item.family)
            .ok_or_else(|| anyhow!("no family for {}", item.path.display()))?;
        let (bottom, top) = split_store_file(&reader, &item.path, &split_point, family)?;
        check_halves(&bottom, &top, &split_point)?;
        *splits += 1;
        // At the front, as HBase: the halves are grouped (or split again) before the rest.
        queue.push_front(Item {
            family: item.family.clone(),
            path: top,
        });
        queue.push_front(Item {
            family: item.family,
            path: bottom,
        });
        // The split source goes now that its halves exist: HBase 2.6.1's tool means to keep
        // an original input file, but its check looks at the `.tmp` directory it has just
        // chosen, so it deletes every split source, originals included. Same here.
        if let Err(e) = std::fs::remove_file(&item.path) {
            tracing::warn!(
                "Unable to delete temporary split file {}: {e}",
                item.path.display()
            );
        }
    }
    Ok(groups)
}

/// HBase's splitStoreFile: `<dir>/.tmp/<uuid>.bottom` (rows before `split`) and `.top` (the
/// rest), written with the family's block size, compression, encoding and Bloom type, with
/// every file-info entry of the source except `hfile.*` and `DATA_BLOCK_ENCODING`.
fn split_store_file(
    reader: &HFileReader,
    path: &Path,
    split: &[u8],
    family: &ColumnFamilyDescriptor,
) -> Result<(PathBuf, PathBuf)> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let tmp = if dir.file_name().is_some_and(|n| n == ".tmp") {
        dir.to_path_buf()
    } else {
        dir.join(".tmp")
    };
    std::fs::create_dir_all(&tmp).with_context(|| format!("creating {}", tmp.display()))?;
    let uuid = format!("{:032x}", rand::random::<u128>());
    let bottom = tmp.join(format!("{uuid}.bottom"));
    let top = tmp.join(format!("{uuid}.top"));
    copy_half(reader, &bottom, split, false, family)?;
    copy_half(reader, &top, split, true, family)?;
    Ok((bottom, top))
}

/// Each half must lie on its side of the split point, or splitting again could go on
/// forever: bottom rows < `split` <= top rows.
fn check_halves(bottom: &Path, top: &Path, split: &[u8]) -> Result<()> {
    for (p, is_top) in [(bottom, false), (top, true)] {
        let r = HFileReader::open(p, ReaderOptions::default())
            .with_context(|| format!("opening {}", p.display()))?;
        if let Some((first, last)) = hfile_row_range(&r)? {
            let ok = if is_top {
                first.as_slice() >= split
            } else {
                last.as_slice() < split
            };
            if !ok {
                bail!(
                    "split half {} holds rows on the wrong side of {}",
                    p.display(),
                    cairn_cell::Escaped(split)
                );
            }
        }
    }
    Ok(())
}

fn copy_half(
    reader: &HFileReader,
    to: &Path,
    split: &[u8],
    top: bool,
    family: &ColumnFamilyDescriptor,
) -> Result<()> {
    let out = std::fs::File::create(to).with_context(|| format!("creating {}", to.display()))?;
    let mut w = HFileWriter::new(
        std::io::BufWriter::new(out),
        to.display().to_string(),
        writer_options(family, true),
    )?;
    let mut sc = reader.scanner();
    let mut more = if top {
        sc.seek(&first_on_row(split)?)?
    } else {
        sc.seek_to_first()?
    };
    while more {
        let c = sc.cell().expect("positioned");
        if !top && c.row() >= split {
            break;
        }
        w.append(&c)?;
        more = sc.next()?;
    }
    for (k, v) in reader.file_info().iter() {
        if !k.starts_with(b"hfile.") && k != keys::DATA_BLOCK_ENCODING {
            w.append_file_info(k, v)?;
        }
    }
    let (out, _) = w.finish()?;
    let file = out
        .into_inner()
        .map_err(|e| anyhow!("writing {}: {}", to.display(), e.error()))?;
    file.sync_all()
        .with_context(|| format!("syncing {}", to.display()))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn boundaries_are_inferred_where_file_ranges_leave_gaps() {
        let edges = |files: &[(&str, &str)]| {
            let mut m: BTreeMap<Vec<u8>, i64> = BTreeMap::new();
            for (first, last) in files {
                *m.entry(first.as_bytes().to_vec()).or_default() += 1;
                *m.entry(last.as_bytes().to_vec()).or_default() -= 1;
            }
            infer_boundaries(&m)
        };
        let keys = edges(&[("a", "c"), ("b", "d"), ("f", "g"), ("h", "h")]);
        assert_eq!(keys, [b"f".to_vec(), b"h".to_vec()]);
        // Touching ranges are one group; one file, or none, gives no split.
        assert!(edges(&[("a", "c"), ("c", "e")]).is_empty());
        assert!(edges(&[("a", "z")]).is_empty());
        assert!(edges(&[]).is_empty());
    }

    #[test]
    fn hbase_file_name_rules() {
        assert!(is_hfile("0123abcdef"));
        assert!(is_hfile("0123abcdef_SeqId_12_"));
        assert!(is_hfile("0123abcdef_del"));
        assert!(!is_hfile("0123abcdef_SeqId__"));
        assert!(!is_hfile("xyz"));
        assert!(!is_hfile("0123.bottom"));
        assert!(is_reference("0123abcd.f00dfeed"));
        assert!(is_reference("0123abcd_SeqId_3_.f00dfeed"));
        assert!(!is_reference("0123abcd"));
        assert!(!is_reference("xyz.bottom"));
        assert!(is_hfile_link("t1=0123abcd-4567ef"));
        assert!(is_hfile_link("ns=t1=0123abcd-4567ef_SeqId_4_"));
        assert!(!is_hfile_link("0123abcd"));
    }

    fn parse(defines: &[&str]) -> Result<Options> {
        let mut all = Vec::new();
        for d in defines {
            let (name, value) = crate::define::split(d)?;
            all.push(crate::site::Property {
                name: name.into(),
                value: value.into(),
                source: "-D".into(),
            });
        }
        Options::parse(&all)
    }

    #[test]
    fn properties_use_hbase_names() {
        let o = parse(&[
            "always.copy.files=true",
            "hbase.mapreduce.bulkload.assign.sequenceNumbers=false",
            "ignore.unmatched.families=YES",
            "hbase.mapreduce.bulkload.max.hfiles.perRegion.perFamily=4",
        ])
        .unwrap();
        assert!(o.copy && !o.assign_seq_num && o.ignore_unmatched);
        assert_eq!(o.max_files_per_region_per_family, 4);
        let e = parse(&["always.copy.files=maybe"]).unwrap_err();
        assert_eq!(
            e.to_string(),
            "-D always.copy.files=maybe: expected true or false"
        );
        assert!(parse(&["novalue"]).is_err());
    }

    /// Every listed name is read: a value it cannot take is refused, or (the two HBase
    /// compares with "yes") "yes" or "no" changes the default.
    #[test]
    fn every_listed_name_is_read() {
        let default = format!("{:?}", Options::default());
        for name in KNOWN {
            let bad = format!("{name}=maybe");
            let refused = parse(&[&bad]).is_err();
            let changed = ["yes", "no"].iter().any(|v| {
                let d = format!("{name}={v}");
                parse(&[&d]).is_ok_and(|o| format!("{o:?}") != default)
            });
            assert!(refused || changed, "{name}");
        }
        assert!(!reads("always.copy.file"));
    }
}
