//! A phase's plan: YCSB's `CoreWorkload.init` and `Client`'s settings, resolved from the
//! properties and checked before the store opens.

use std::collections::BTreeMap;
use std::time::Duration;

use anyhow::{anyhow, bail, Result};
use cairn_region::{ColumnFamilyDescriptor, Durability, TableDescriptor, TableName};

use super::generator::{AckCounter, Counter, ScrambledZipfian, SkewedLatest, Zipfian};
use super::properties::Props;
use super::workload::{FieldLength, KeyChooser, Op, ScanLength, Workload};
use super::Phase;

/// Everything a phase needs, resolved from the properties.
pub(crate) struct Plan {
    pub(crate) workload: Workload,
    /// Load: the records to insert; run: the operations.
    pub(crate) load_ops: u64,
    pub(crate) run_ops: u64,
    pub(crate) threads: usize,
    pub(crate) target: u64,
    pub(crate) status: bool,
    pub(crate) status_interval: Duration,
    pub(crate) label: String,
    pub(crate) max_time: Option<Duration>,
    pub(crate) percentiles: Vec<f64>,
    pub(crate) descriptor: TableDescriptor,
}

pub(crate) fn plan(props: &BTreeMap<String, String>, phase: Phase) -> Result<Plan> {
    let p = Props(props);
    let wl = p.str("workload", "site.ycsb.workloads.CoreWorkload");
    if !wl.ends_with(".CoreWorkload") && wl != "CoreWorkload" {
        bail!("workload={wl}: only YCSB's CoreWorkload is supported");
    }
    let mtype = p.str("measurementtype", "hdrhistogram");
    if mtype != "hdrhistogram" {
        bail!("measurementtype={mtype}: only hdrhistogram is supported");
    }
    let interval = p.str("measurement.interval", "op");
    if interval != "op" {
        bail!("measurement.interval={interval}: only op is supported");
    }
    if p.bool("dataintegrity", false)? {
        bail!("dataintegrity=true is not supported");
    }
    let record_count = p.u64("recordcount", 0)?;
    if record_count == 0 {
        bail!("recordcount must be at least 1 (set it in the -P file or with -p recordcount=N)");
    }
    let insert_start = p.u64("insertstart", 0)?;
    let insert_count = match props.get("insertcount") {
        Some(_) => p.u64("insertcount", 0)?,
        None => record_count.checked_sub(insert_start).ok_or_else(|| {
            anyhow!("insertstart={insert_start} is past recordcount={record_count}")
        })?,
    };
    if record_count < insert_start + insert_count {
        bail!(
            "insertstart={insert_start} + insertcount={insert_count} is past \
             recordcount={record_count}: recordcount must be at least insertstart + insertcount"
        );
    }
    if insert_count == 0 {
        bail!("insertcount must be at least 1");
    }
    let run_ops = p.u64("operationcount", 0)?;
    let max_secs = p.u64("maxexecutiontime", 0)?;
    if phase != Phase::Load && run_ops == 0 && max_secs == 0 {
        bail!(
            "operationcount must be at least 1 (or 0 with maxexecutiontime=SECONDS to run for a \
             time)"
        );
    }
    let field_count = p.u64("fieldcount", 10)?;
    if field_count == 0 {
        bail!("fieldcount must be at least 1");
    }
    let prefix = p.str("fieldnameprefix", "field");
    let field_length = p.u64("fieldlength", 100)?;
    let min_field_length = p.u64("minfieldlength", 1)?;
    let fld = p.str("fieldlengthdistribution", "constant");
    let field_length = match fld.as_str() {
        "constant" => FieldLength::Constant(field_length),
        "uniform" | "zipfian" if min_field_length > field_length => {
            bail!("minfieldlength={min_field_length} is more than fieldlength={field_length}")
        }
        "uniform" => FieldLength::Uniform {
            min: min_field_length,
            max: field_length,
        },
        "zipfian" => FieldLength::Zipfian(Zipfian::new(min_field_length, field_length)),
        "histogram" => bail!("fieldlengthdistribution=histogram is not supported"),
        other => bail!("fieldlengthdistribution={other}: unknown (constant, uniform or zipfian)"),
    };
    let mut ops = Vec::new();
    for (k, default, op) in [
        ("readproportion", 0.95, Op::Read),
        ("updateproportion", 0.05, Op::Update),
        ("insertproportion", 0.0, Op::Insert),
        ("scanproportion", 0.0, Op::Scan),
        ("readmodifywriteproportion", 0.0, Op::ReadModifyWrite),
    ] {
        let w = p.f64(k, default)?;
        if w > 0.0 {
            ops.push((w, op));
        }
    }
    if ops.is_empty() && phase != Phase::Load {
        bail!(
            "every operation proportion is 0: set readproportion, updateproportion, \
             insertproportion, scanproportion or readmodifywriteproportion"
        );
    }
    let insert_proportion = p.f64("insertproportion", 0.0)?;
    let dist = p.str("requestdistribution", "uniform");
    let key_chooser = match dist.as_str() {
        "uniform" => KeyChooser::Uniform {
            lb: insert_start,
            ub: insert_start + insert_count - 1,
        },
        "zipfian" => {
            // YCSB sizes the key space for the inserts it expects (x2), so popular keys stay
            // popular as the table grows; keys not yet inserted are drawn again.
            let expected_new = (run_ops as f64 * insert_proportion * 2.0) as u64;
            KeyChooser::Zipfian(ScrambledZipfian::new(
                insert_start,
                insert_start + insert_count + expected_new,
            ))
        }
        "latest" => KeyChooser::Latest(SkewedLatest::new(record_count - 1)),
        "hotspot" | "sequential" | "exponential" => {
            bail!("requestdistribution={dist} is not supported (uniform, zipfian or latest)")
        }
        other => bail!("requestdistribution={other}: unknown (uniform, zipfian or latest)"),
    };
    let min_scan = p.u64("minscanlength", 1)?;
    let max_scan = p.u64("maxscanlength", 1000)?;
    if min_scan > max_scan {
        bail!("minscanlength={min_scan} is more than maxscanlength={max_scan}");
    }
    let sld = p.str("scanlengthdistribution", "uniform");
    let scan_length = match sld.as_str() {
        "uniform" => ScanLength::Uniform {
            min: min_scan,
            max: max_scan,
        },
        "zipfian" => ScanLength::Zipfian(Zipfian::new(min_scan, max_scan)),
        other => bail!("scanlengthdistribution={other}: not allowed (uniform or zipfian)"),
    };
    let order = p.str("insertorder", "hashed");
    let ordered_inserts = match order.as_str() {
        "hashed" => false,
        // YCSB: anything other than "hashed" is ordered.
        _ => true,
    };
    let durability = match p
        .str("durability", "USE_DEFAULT")
        .to_ascii_uppercase()
        .as_str()
    {
        "USE_DEFAULT" => None,
        d => Some(
            d.parse::<Durability>()
                .map_err(|e| anyhow!("durability={d}: {e}"))?,
        ),
    };
    let table_name = p.str("table", "usertable");
    let table = TableName::parse(&table_name).map_err(|e| anyhow!("table={table_name}: {e}"))?;
    let family = p.str("columnfamily", "family");
    let descriptor = TableDescriptor::new(table.clone())
        .with_family(ColumnFamilyDescriptor::new(family.clone()));
    descriptor
        .validate()
        .map_err(|e| anyhow!("table={table_name}, columnfamily={family}: {e}"))?;
    let threads = p.u64("threadcount", 1)?;
    if threads == 0 || threads > 1024 {
        bail!("threadcount={threads}: must be 1 … 1024");
    }
    let percentiles: Vec<f64> = p
        .str("hdrhistogram.percentiles", "95,99")
        .split(',')
        .map(|s| {
            s.trim()
                .parse::<f64>()
                .ok()
                .filter(|x| (0.0..=100.0).contains(x))
                .ok_or_else(|| anyhow!("hdrhistogram.percentiles: {s:?} is not a percentile"))
        })
        .collect::<Result<_>>()?;
    let status_interval = p.u64("status.interval", 10)?.max(1);
    let load_ops = if props.contains_key("insertcount") {
        insert_count
    } else {
        record_count
    };
    Ok(Plan {
        workload: Workload {
            table,
            family: family.into_bytes(),
            field_names: (0..field_count)
                .map(|i| format!("{prefix}{i}").into_bytes())
                .collect(),
            field_length,
            read_all_fields: p.bool("readallfields", true)?,
            read_all_fields_by_name: p.bool("readallfieldsbyname", false)?,
            write_all_fields: p.bool("writeallfields", false)?,
            ordered_inserts,
            zero_padding: p.u64("zeropadding", 1)? as usize,
            ops,
            key_chooser,
            scan_length,
            key_sequence: Counter::new(insert_start),
            insert_sequence: AckCounter::new(record_count),
            durability,
        },
        load_ops,
        run_ops,
        threads: threads as usize,
        target: p.u64("target", 0)?,
        status: p.bool("status", false)?,
        status_interval: Duration::from_secs(status_interval),
        label: p.str("label", ""),
        max_time: (max_secs > 0).then(|| Duration::from_secs(max_secs)),
        percentiles,
        descriptor,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ycsb::generator;
    use crate::ycsb::properties::{parse_properties, BUILTIN};

    #[test]
    fn keys_are_ycsbs() {
        let mut props = BTreeMap::new();
        parse_properties(BUILTIN[0].1, &mut props);
        let mut p = plan(&props, Phase::Run).unwrap();
        p.workload.ordered_inserts = true;
        p.workload.zero_padding = 8;
        assert_eq!(p.workload.key(5), b"user00000005".to_vec());
        p.workload.zero_padding = 1;
        assert_eq!(p.workload.key(5), b"user5".to_vec());
        p.workload.ordered_inserts = false;
        let k = String::from_utf8(p.workload.key(5)).unwrap();
        assert_eq!(k, format!("user{}", generator::fnvhash64(5)));
    }
}
