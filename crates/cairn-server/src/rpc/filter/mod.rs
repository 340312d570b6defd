//! HBase's filters and comparators as its Java client sends them (`hbase.pb.Filter` and
//! `hbase.pb.Comparator`: a Java class name and the bytes of that class's own message, as
//! `ProtobufUtil.toFilter` / `toComparator` and each class's `toByteArray` write them), turned
//! into cairn-filter's filters the way each class's static `parseFrom` reads them.
//!
//! Every filter cairn-filter implements is accepted, plus `FilterAllFilter` (the filter of
//! HBase's PerformanceEvaluation `--filterAll`, which lives in HBase's test jar), built here.
//! Absent proto2 fields read as HBase reads them (an absent optional `bool` is `false`, an
//! absent optional `bytes` is Java's `null`). Classes cairn-filter lacks, fields HBase's
//! constructors reject, and bytes that do not parse are errors naming the class; the server
//! reports them as `DoNotRetryIOException`, as HBase does.
//!
//! Divergences: prost does not enforce proto2 `required` fields, so a message missing one
//! reads its default where HBase fails to parse (a missing wrapped filter or comparator has no
//! class name and is refused as malformed); `RegexStringComparator` compiles its
//! pattern with the `regex` crate (see [`cairn_filter::Comparator::regex_string`]), decodes
//! cells as UTF-8 only, and treats the JONI engine as the JAVA one: HBase 2.6's JONI engine
//! searches bytes `[offset, length)` of the cell's backing array instead of the value, so on a
//! region server it almost never matches; cairn matches the value as the client meant.

use std::fmt;

use cairn_cell::CellRef;
use cairn_filter::{
    BitwiseOp, ColumnCountGetFilter, ColumnPaginationFilter, ColumnPrefixFilter, ColumnRangeFilter,
    ColumnValueFilter, Comparator, CompareOp, DependentColumnFilter, FamilyFilter, Filter,
    FilterAllFilter, FilterError, FilterList, FirstKeyOnlyFilter, InclusiveStopFilter,
    KeyOnlyFilter, MultipleColumnPrefixFilter, Operator, PageFilter, PrefixFilter, QualifierFilter,
    ReturnCode, RowFilter, SingleColumnValueExcludeFilter, SingleColumnValueFilter, SkipFilter,
    TimestampsFilter, ValueFilter, WhileMatchFilter, MAX_FILTER_DEPTH,
};
use cairn_rpc::pb;
use prost::Message;

/// The Java package of HBase's filters and comparators.
const PACKAGE: &str = "org.apache.hadoop.hbase.filter.";

/// HBase 2.6 filter classes cairn-filter does not implement.
const UNSUPPORTED_FILTERS: &[&str] = &[
    "FuzzyRowFilter",
    "MultiRowRangeFilter",
    "RandomRowFilter",
    "FirstKeyValueMatchingQualifiersFilter",
];

/// HBase 2.6 comparator classes cairn-filter does not implement.
const UNSUPPORTED_COMPARATORS: &[&str] = &[
    "LongComparator",
    "BigDecimalComparator",
    "BinaryComponentComparator",
];

/// Why an `hbase.pb.Filter` or `hbase.pb.Comparator` could not be turned into a filter. Every
/// variant names the Java class it is about ([`FilterPbError::class`]).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum FilterPbError {
    /// A class name that is not one of HBase's filters or comparators, or one cairn-filter
    /// does not implement.
    #[error("{class}: {reason}")]
    Unsupported {
        /// The class name as sent.
        class: String,
        /// Why it cannot be built.
        reason: String,
    },
    /// The class's serialized bytes are not its protobuf message (or lack a part HBase
    /// requires).
    #[error("{class}: the serialized bytes do not parse as hbase.pb.{message}: {detail}")]
    Malformed {
        /// The class name as sent.
        class: String,
        /// The protobuf message the bytes should hold.
        message: &'static str,
        /// What is wrong.
        detail: String,
    },
    /// The message parsed but holds values HBase's constructor rejects.
    #[error("{class}: {reason}")]
    Invalid {
        /// The class name as sent.
        class: String,
        /// What is wrong.
        reason: String,
    },
    /// Lists and wrappers nested deeper than [`MAX_FILTER_DEPTH`].
    #[error("{class}: filters nested deeper than {limit} levels")]
    TooDeep {
        /// The list or wrapper past the limit.
        class: String,
        /// The limit.
        limit: usize,
    },
}

impl FilterPbError {
    /// The Java class the error is about.
    pub fn class(&self) -> &str {
        match self {
            FilterPbError::Unsupported { class, .. }
            | FilterPbError::Malformed { class, .. }
            | FilterPbError::Invalid { class, .. }
            | FilterPbError::TooDeep { class, .. } => class,
        }
    }
}

/// Builds the filter an `hbase.pb.Filter` describes (`ProtobufUtil.toFilter`).
pub fn filter_from_pb(f: &pb::Filter) -> Result<Box<dyn Filter>, FilterPbError> {
    build_filter(f, 0)
}

/// Builds the comparator an `hbase.pb.Comparator` describes (`ProtobufUtil.toComparator`).
pub fn comparator_from_pb(c: &pb::Comparator) -> Result<Comparator, FilterPbError> {
    let class = c.name.as_str();
    let bytes = c.serialized_comparator.as_deref().unwrap_or_default();
    let short = class.strip_prefix(PACKAGE).unwrap_or("");
    match short {
        "BinaryComparator" => {
            let m: pb::BinaryComparator = decode(class, "BinaryComparator", bytes)?;
            Ok(Comparator::binary(comparable_value(m.comparable)))
        }
        "BinaryPrefixComparator" => {
            let m: pb::BinaryPrefixComparator = decode(class, "BinaryPrefixComparator", bytes)?;
            Ok(Comparator::binary_prefix(comparable_value(m.comparable)))
        }
        "BitComparator" => {
            let m: pb::BitComparator = decode(class, "BitComparator", bytes)?;
            let op = match pb::bit_comparator::BitwiseOp::try_from(m.bitwise_op) {
                Ok(pb::bit_comparator::BitwiseOp::And) => BitwiseOp::And,
                Ok(pb::bit_comparator::BitwiseOp::Or) => BitwiseOp::Or,
                Ok(pb::bit_comparator::BitwiseOp::Xor) => BitwiseOp::Xor,
                Err(_) => {
                    return Err(malformed(
                        class,
                        "BitComparator",
                        format!("bitwise_op {} is not AND, OR or XOR", m.bitwise_op),
                    ))
                }
            };
            Ok(Comparator::Bit {
                value: comparable_value(m.comparable),
                op,
            })
        }
        "NullComparator" => {
            let _: pb::NullComparator = decode(class, "NullComparator", bytes)?;
            Ok(Comparator::Null)
        }
        "SubstringComparator" => {
            let m: pb::SubstringComparator = decode(class, "SubstringComparator", bytes)?;
            Ok(Comparator::substring(&m.substr))
        }
        "RegexStringComparator" => {
            let m: pb::RegexStringComparator = decode(class, "RegexStringComparator", bytes)?;
            regex_comparator(class, &m)
        }
        s if UNSUPPORTED_COMPARATORS.contains(&s) => Err(unsupported(
            class,
            "cairn-filter does not implement this comparator",
        )),
        _ => Err(unsupported(class, "not a comparator class HBase 2.6 has")),
    }
}

/// `CompareFilter`'s operator from `hbase.pb.CompareType` (an enum field's raw value).
pub fn compare_op_from_pb(value: i32) -> Option<CompareOp> {
    Some(match pb::CompareType::try_from(value).ok()? {
        pb::CompareType::Less => CompareOp::Less,
        pb::CompareType::LessOrEqual => CompareOp::LessOrEqual,
        pb::CompareType::Equal => CompareOp::Equal,
        pb::CompareType::NotEqual => CompareOp::NotEqual,
        pb::CompareType::GreaterOrEqual => CompareOp::GreaterOrEqual,
        pb::CompareType::Greater => CompareOp::Greater,
        pb::CompareType::NoOp => CompareOp::NoOp,
    })
}

fn unsupported(class: &str, reason: impl Into<String>) -> FilterPbError {
    FilterPbError::Unsupported {
        class: class.to_owned(),
        reason: reason.into(),
    }
}

fn malformed(class: &str, message: &'static str, detail: impl Into<String>) -> FilterPbError {
    FilterPbError::Malformed {
        class: class.to_owned(),
        message,
        detail: detail.into(),
    }
}

fn invalid(class: &str, reason: impl fmt::Display) -> FilterPbError {
    FilterPbError::Invalid {
        class: class.to_owned(),
        reason: reason.to_string(),
    }
}

/// Decodes the class's own message.
fn decode<M: Message + Default>(
    class: &str,
    message: &'static str,
    bytes: &[u8],
) -> Result<M, FilterPbError> {
    M::decode(bytes).map_err(|e| malformed(class, message, e.to_string()))
}

/// `ByteArrayComparable.value`: absent reads as empty, as protobuf's Java getter does.
fn comparable_value(c: pb::ByteArrayComparable) -> Vec<u8> {
    c.value.unwrap_or_default()
}

/// A required message field: prost reads an absent one as the default message, whose class
/// name is empty.
fn required_named<T>(
    class: &str,
    message: &'static str,
    field: &str,
    name: &str,
    value: T,
) -> Result<T, FilterPbError> {
    if name.is_empty() {
        Err(malformed(
            class,
            message,
            format!("required field {field} is missing"),
        ))
    } else {
        Ok(value)
    }
}

fn compare_op(class: &str, message: &'static str, value: i32) -> Result<CompareOp, FilterPbError> {
    compare_op_from_pb(value).ok_or_else(|| {
        malformed(
            class,
            message,
            format!("compare_op {value} is not a CompareType"),
        )
    })
}

/// The class's serialized message, as `FilterBase.toByteArray` wrote it.
fn filter_bytes(f: &pb::Filter) -> &[u8] {
    f.serialized_filter.as_deref().unwrap_or_default()
}

fn build_filter(f: &pb::Filter, depth: usize) -> Result<Box<dyn Filter>, FilterPbError> {
    let class = f.name.as_str();
    let bytes = filter_bytes(f);
    let short = class.strip_prefix(PACKAGE).unwrap_or("");
    // Lists and wrappers go one level deeper; the filter language bounds the same nesting.
    let nested = || {
        if depth >= MAX_FILTER_DEPTH {
            Err(FilterPbError::TooDeep {
                class: class.to_owned(),
                limit: MAX_FILTER_DEPTH,
            })
        } else {
            Ok(depth + 1)
        }
    };
    Ok(match short {
        "FilterList" => {
            let m: pb::FilterList = decode(class, "FilterList", bytes)?;
            let operator = match pb::filter_list::Operator::try_from(m.operator) {
                Ok(pb::filter_list::Operator::MustPassAll) => Operator::MustPassAll,
                Ok(pb::filter_list::Operator::MustPassOne) => Operator::MustPassOne,
                Err(_) => {
                    return Err(malformed(
                        class,
                        "FilterList",
                        format!("operator {} is not MUST_PASS_ALL or MUST_PASS_ONE", m.operator),
                    ))
                }
            };
            let depth = nested()?;
            let filters = m
                .filters
                .iter()
                .map(|sub| build_filter(sub, depth))
                .collect::<Result<Vec<_>, _>>()?;
            Box::new(FilterList::new(operator, filters))
        }
        "SkipFilter" => {
            let m: pb::SkipFilter = decode(class, "SkipFilter", bytes)?;
            let inner = required_named(class, "SkipFilter", "filter", &m.filter.name, &m.filter)?;
            Box::new(SkipFilter::new(build_filter(inner, nested()?)?))
        }
        "WhileMatchFilter" => {
            let m: pb::WhileMatchFilter = decode(class, "WhileMatchFilter", bytes)?;
            let inner = required_named(class, "WhileMatchFilter", "filter", &m.filter.name, &m.filter)?;
            Box::new(WhileMatchFilter::new(build_filter(inner, nested()?)?))
        }
        "RowFilter" => {
            let m: pb::RowFilter = decode(class, "RowFilter", bytes)?;
            let (op, c) = compare_filter(class, "RowFilter", m.compare_filter)?;
            Box::new(RowFilter::new(op, c))
        }
        "FamilyFilter" => {
            let m: pb::FamilyFilter = decode(class, "FamilyFilter", bytes)?;
            let (op, c) = compare_filter(class, "FamilyFilter", m.compare_filter)?;
            Box::new(FamilyFilter::new(op, c))
        }
        "QualifierFilter" => {
            let m: pb::QualifierFilter = decode(class, "QualifierFilter", bytes)?;
            let (op, c) = compare_filter(class, "QualifierFilter", m.compare_filter)?;
            Box::new(QualifierFilter::new(op, c))
        }
        "ValueFilter" => {
            let m: pb::ValueFilter = decode(class, "ValueFilter", bytes)?;
            let (op, c) = compare_filter(class, "ValueFilter", m.compare_filter)?;
            Box::new(ValueFilter::new(op, c))
        }
        "SingleColumnValueFilter" => {
            let m: pb::SingleColumnValueFilter = decode(class, "SingleColumnValueFilter", bytes)?;
            Box::new(single_column_value(class, "SingleColumnValueFilter", m)?)
        }
        "SingleColumnValueExcludeFilter" => {
            let m: pb::SingleColumnValueExcludeFilter =
                decode(class, "SingleColumnValueExcludeFilter", bytes)?;
            Box::new(SingleColumnValueExcludeFilter::new(single_column_value(
                class,
                "SingleColumnValueExcludeFilter",
                m.single_column_value_filter,
            )?))
        }
        "DependentColumnFilter" => {
            let m: pb::DependentColumnFilter = decode(class, "DependentColumnFilter", bytes)?;
            let cf = m.compare_filter;
            let op = compare_op(class, "DependentColumnFilter", cf.compare_op)?;
            let f = DependentColumnFilter::new(
                m.column_family.unwrap_or_default(),
                m.column_qualifier.unwrap_or_default(),
                m.drop_dependent_column.unwrap_or(false),
            );
            // Without a comparator HBase ignores the operator.
            Box::new(match cf.comparator {
                Some(c) => f.with_comparison(op, comparator_from_pb(&c)?),
                None => f,
            })
        }
        "ColumnValueFilter" => {
            let m: pb::ColumnValueFilter = decode(class, "ColumnValueFilter", bytes)?;
            let op = compare_op(class, "ColumnValueFilter", m.compare_op)?;
            let c = &m.comparator;
            required_named(class, "ColumnValueFilter", "comparator", &c.name, ())?;
            Box::new(ColumnValueFilter::new(
                m.family,
                m.qualifier,
                op,
                comparator_from_pb(c)?,
            ))
        }
        "PrefixFilter" => {
            let m: pb::PrefixFilter = decode(class, "PrefixFilter", bytes)?;
            match m.prefix {
                Some(prefix) => Box::new(PrefixFilter::new(prefix)),
                None => Box::new(NullPrefixFilter),
            }
        }
        "InclusiveStopFilter" => {
            let m: pb::InclusiveStopFilter = decode(class, "InclusiveStopFilter", bytes)?;
            match m.stop_row_key {
                Some(stop) => Box::new(InclusiveStopFilter::new(stop)),
                // HBase builds it, then fails on the first row it compares.
                None => return Err(invalid(class, "no stop row: HBase fails on the first row")),
            }
        }
        "ColumnPrefixFilter" => {
            let m: pb::ColumnPrefixFilter = decode(class, "ColumnPrefixFilter", bytes)?;
            Box::new(ColumnPrefixFilter::new(m.prefix))
        }
        "MultipleColumnPrefixFilter" => {
            let m: pb::MultipleColumnPrefixFilter =
                decode(class, "MultipleColumnPrefixFilter", bytes)?;
            Box::new(
                MultipleColumnPrefixFilter::new(m.sorted_prefixes)
                    .map_err(|e| invalid(class, e))?,
            )
        }
        "ColumnRangeFilter" => {
            let m: pb::ColumnRangeFilter = decode(class, "ColumnRangeFilter", bytes)?;
            Box::new(ColumnRangeFilter::new(
                m.min_column,
                m.min_column_inclusive.unwrap_or(false),
                m.max_column,
                m.max_column_inclusive.unwrap_or(false),
            ))
        }
        "ColumnCountGetFilter" => {
            let m: pb::ColumnCountGetFilter = decode(class, "ColumnCountGetFilter", bytes)?;
            Box::new(ColumnCountGetFilter::new(m.limit).map_err(|e| invalid(class, e))?)
        }
        "ColumnPaginationFilter" => {
            let m: pb::ColumnPaginationFilter = decode(class, "ColumnPaginationFilter", bytes)?;
            let f = match m.column_offset {
                Some(column) => ColumnPaginationFilter::with_column_offset(m.limit, column),
                None => ColumnPaginationFilter::new(m.limit, m.offset.unwrap_or(0)),
            };
            Box::new(f.map_err(|e| invalid(class, e))?)
        }
        "PageFilter" => {
            let m: pb::PageFilter = decode(class, "PageFilter", bytes)?;
            Box::new(PageFilter::new(m.page_size).map_err(|e| invalid(class, e))?)
        }
        "TimestampsFilter" => {
            let m: pb::TimestampsFilter = decode(class, "TimestampsFilter", bytes)?;
            Box::new(
                TimestampsFilter::new(m.timestamps, m.can_hint.unwrap_or(false))
                    .map_err(|e| invalid(class, e))?,
            )
        }
        "KeyOnlyFilter" => {
            let m: pb::KeyOnlyFilter = decode(class, "KeyOnlyFilter", bytes)?;
            Box::new(KeyOnlyFilter::new(m.len_as_val))
        }
        "FirstKeyOnlyFilter" => {
            let _: pb::FirstKeyOnlyFilter = decode(class, "FirstKeyOnlyFilter", bytes)?;
            Box::new(FirstKeyOnlyFilter::new())
        }
        "FilterAllFilter" => {
            // HBase's parseFrom does not even read the bytes.
            Box::new(FilterAllFilter)
        }
        "FilterWrapper" => {
            return Err(unsupported(
                class,
                "HBase's server-side wrapper is not a client filter; cairn's scanner applies its rules itself",
            ))
        }
        s if UNSUPPORTED_FILTERS.contains(&s) => {
            return Err(unsupported(class, "cairn-filter does not implement this filter"))
        }
        _ => return Err(unsupported(class, "not a filter class HBase 2.6 has")),
    })
}

/// `CompareFilter` inside Row/Family/Qualifier/ValueFilter: the operator and comparator.
fn compare_filter(
    class: &str,
    message: &'static str,
    cf: pb::CompareFilter,
) -> Result<(CompareOp, Comparator), FilterPbError> {
    let op = compare_op(class, message, cf.compare_op)?;
    match cf.comparator {
        Some(c) => Ok((op, comparator_from_pb(&c)?)),
        // NO_OP never consults its comparator, so HBase runs it without one.
        None if op == CompareOp::NoOp => Ok((op, Comparator::binary(Vec::new()))),
        None => Err(invalid(
            class,
            "no comparator: HBase fails on the first cell it compares",
        )),
    }
}

/// `SingleColumnValueFilter.parseFrom`: absent booleans read `false` (HBase's own
/// `toByteArray` always writes both), an absent family or qualifier is empty.
fn single_column_value(
    class: &str,
    message: &'static str,
    m: pb::SingleColumnValueFilter,
) -> Result<SingleColumnValueFilter, FilterPbError> {
    let op = compare_op(class, message, m.compare_op)?;
    let c = &m.comparator;
    required_named(class, message, "comparator", &c.name, ())?;
    let f = SingleColumnValueFilter::new(
        m.column_family.unwrap_or_default(),
        m.column_qualifier.unwrap_or_default(),
        op,
        comparator_from_pb(c)?,
    )
    .map_err(|e| invalid(class, e))?;
    Ok(
        f.with_filter_if_missing(m.filter_if_missing.unwrap_or(false))
            .with_latest_version_only(m.latest_version_only.unwrap_or(false)),
    )
}

/// `java.util.regex.Pattern` flag bits, as `RegexStringComparator` sends them. The others
/// (`UNIX_LINES`, `UNICODE_CASE`, `UNICODE_CHARACTER_CLASS`) describe what the regex crate
/// always does: `\n` is its only line end, case folding and classes are Unicode.
mod java_flags {
    pub const CASE_INSENSITIVE: i32 = 0x02;
    pub const COMMENTS: i32 = 0x04;
    pub const MULTILINE: i32 = 0x08;
    pub const LITERAL: i32 = 0x10;
    pub const DOTALL: i32 = 0x20;
    pub const CANON_EQ: i32 = 0x80;
    /// Every flag `Pattern.compile` accepts.
    pub const ALL: i32 = 0x1ff;
}

/// `RegexStringComparator.parseFrom`: the pattern with its `Pattern` flags (JAVA engine) or
/// the flags the JONI engine maps to them, in a charset.
fn regex_comparator(
    class: &str,
    m: &pb::RegexStringComparator,
) -> Result<Comparator, FilterPbError> {
    use java_flags::*;
    match m.engine.as_deref() {
        None | Some("JAVA") | Some("JONI") => {}
        Some(other) => {
            return Err(invalid(
                class,
                format!("engine {other:?} is neither JAVA nor JONI"),
            ))
        }
    }
    let charset = m.charset.as_str();
    if !(charset.is_empty()
        || charset.eq_ignore_ascii_case("UTF-8")
        || charset.eq_ignore_ascii_case("UTF8"))
    {
        return Err(unsupported(
            class,
            format!("charset {charset:?}: cairn-filter decodes cells for regular expressions as UTF-8 only"),
        ));
    }
    let flags = m.pattern_flags;
    if flags & !ALL != 0 {
        return Err(invalid(
            class,
            format!("pattern_flags {flags:#x} has bits java.util.regex.Pattern does not define"),
        ));
    }
    if flags & CANON_EQ != 0 {
        return Err(unsupported(
            class,
            "Pattern.CANON_EQ has no equivalent in cairn-filter's regular expressions",
        ));
    }
    let case_insensitive = flags & CASE_INSENSITIVE != 0;
    let expression = if flags & LITERAL != 0 {
        // Under LITERAL only the case flags still count.
        escape_literal(&m.pattern)
    } else {
        let mut on = String::new();
        if flags & MULTILINE != 0 {
            on.push('m');
        }
        if flags & COMMENTS != 0 {
            on.push('x');
        }
        // cairn-filter compiles with DOTALL on, HBase's default; switch it off when absent.
        let off = if flags & DOTALL == 0 { "-s" } else { "" };
        if on.is_empty() && off.is_empty() {
            m.pattern.clone()
        } else {
            format!("(?{on}{off}){}", m.pattern)
        }
    };
    let built = Comparator::regex_string(&expression, case_insensitive).map_err(|e| match e {
        FilterError::Invalid { message, .. } => invalid(
            class,
            format!("pattern {:?} does not compile: {message}", m.pattern),
        ),
        other => invalid(class, other),
    })?;
    // Keep the pattern as sent (the inline flags are this module's doing).
    Ok(match built {
        Comparator::RegexString { regex, .. } => Comparator::RegexString {
            pattern: m.pattern.clone(),
            case_insensitive,
            regex,
        },
        other => other,
    })
}

/// The pattern as a regular expression matching it literally.
fn escape_literal(pattern: &str) -> String {
    let mut out = String::with_capacity(pattern.len() * 2);
    for ch in pattern.chars() {
        if "\\.+*?()|[]{}^$#&-~".contains(ch) {
            out.push('\\');
        }
        out.push(ch);
    }
    out
}

/// `PrefixFilter` built without a prefix (`new PrefixFilter(null)`, sent with the field
/// absent): HBase's `filterRowKey` drops every row before looking at it, and its row flag
/// keeps its reset value, so cells answer `NEXT_ROW` and `filterRow` is true.
#[derive(Debug, Clone, Copy, Default)]
struct NullPrefixFilter;

impl Filter for NullPrefixFilter {
    fn filter_row_key(&mut self, _row: &[u8]) -> bool {
        true
    }
    fn filter_cell(&mut self, _cell: &CellRef<'_>) -> ReturnCode {
        ReturnCode::NextRow
    }
    fn filter_row(&mut self) -> bool {
        true
    }
}

#[cfg(test)]
mod tests;
