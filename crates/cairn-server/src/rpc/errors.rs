//! Failures as HBase's client sees them: a Java exception class name (the client instantiates
//! it by name and decides from its type, and from `do_not_retry`, whether to retry), and a
//! message. The names are HBase 2.6's own.

use cairn_region::RegionError;
use cairn_rpc::pb;
use cairn_rpc::WireError;

/// `org.apache.hadoop.hbase.DoNotRetryIOException`.
pub const DO_NOT_RETRY: &str = "org.apache.hadoop.hbase.DoNotRetryIOException";
/// `org.apache.hadoop.hbase.NotServingRegionException`.
pub const NOT_SERVING_REGION: &str = "org.apache.hadoop.hbase.NotServingRegionException";
/// `org.apache.hadoop.hbase.UnknownScannerException`.
pub const UNKNOWN_SCANNER: &str = "org.apache.hadoop.hbase.UnknownScannerException";
/// `org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException`.
pub const OUT_OF_ORDER_SCANNER_NEXT: &str =
    "org.apache.hadoop.hbase.exceptions.OutOfOrderScannerNextException";
/// `org.apache.hadoop.hbase.CallQueueTooBigException`.
pub const CALL_QUEUE_TOO_BIG: &str = "org.apache.hadoop.hbase.CallQueueTooBigException";
/// `org.apache.hadoop.hbase.exceptions.RequestTooBigException`.
pub const REQUEST_TOO_BIG: &str = "org.apache.hadoop.hbase.exceptions.RequestTooBigException";
/// `org.apache.hadoop.hbase.ipc.FatalConnectionException`.
pub const FATAL_CONNECTION: &str = "org.apache.hadoop.hbase.ipc.FatalConnectionException";
/// `org.apache.hadoop.hbase.ipc.UnknownServiceException`.
pub const UNKNOWN_SERVICE: &str = "org.apache.hadoop.hbase.ipc.UnknownServiceException";
/// `org.apache.hadoop.hbase.ipc.WrongVersionException`.
pub const WRONG_VERSION: &str = "org.apache.hadoop.hbase.ipc.WrongVersionException";
/// `org.apache.hadoop.hbase.ipc.BadAuthException`.
pub const BAD_AUTH: &str = "org.apache.hadoop.hbase.ipc.BadAuthException";
/// `org.apache.hadoop.hbase.ipc.UnsupportedCellCodecException`.
pub const UNSUPPORTED_CELL_CODEC: &str =
    "org.apache.hadoop.hbase.ipc.UnsupportedCellCodecException";
/// `org.apache.hadoop.hbase.ipc.UnsupportedCompressionCodecException`.
pub const UNSUPPORTED_COMPRESSION_CODEC: &str =
    "org.apache.hadoop.hbase.ipc.UnsupportedCompressionCodecException";
/// `org.apache.hadoop.hbase.ipc.SecurityNotEnabledException`.
pub const SECURITY_NOT_ENABLED: &str = "org.apache.hadoop.hbase.ipc.SecurityNotEnabledException";
/// `org.apache.hadoop.hbase.TableNotFoundException`.
pub const TABLE_NOT_FOUND: &str = "org.apache.hadoop.hbase.TableNotFoundException";
/// `org.apache.hadoop.hbase.TableExistsException`.
pub const TABLE_EXISTS: &str = "org.apache.hadoop.hbase.TableExistsException";
/// `org.apache.hadoop.hbase.TableNotEnabledException`.
pub const TABLE_NOT_ENABLED: &str = "org.apache.hadoop.hbase.TableNotEnabledException";
/// `org.apache.hadoop.hbase.TableNotDisabledException`.
pub const TABLE_NOT_DISABLED: &str = "org.apache.hadoop.hbase.TableNotDisabledException";
/// `org.apache.hadoop.hbase.NamespaceNotFoundException`.
pub const NAMESPACE_NOT_FOUND: &str = "org.apache.hadoop.hbase.NamespaceNotFoundException";
/// `org.apache.hadoop.hbase.NamespaceExistException`.
pub const NAMESPACE_EXISTS: &str = "org.apache.hadoop.hbase.NamespaceExistException";
/// `org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException`.
pub const NO_SUCH_COLUMN_FAMILY: &str =
    "org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException";
/// `org.apache.hadoop.hbase.RegionTooBusyException`.
pub const REGION_TOO_BUSY: &str = "org.apache.hadoop.hbase.RegionTooBusyException";
/// `org.apache.hadoop.hbase.regionserver.WrongRegionException`.
pub const WRONG_REGION: &str = "org.apache.hadoop.hbase.regionserver.WrongRegionException";
/// `org.apache.hadoop.hbase.exceptions.FailedSanityCheckException`.
pub const FAILED_SANITY_CHECK: &str =
    "org.apache.hadoop.hbase.exceptions.FailedSanityCheckException";
/// `java.lang.IllegalArgumentException`: HBase's refusal of a name or row, sent as the cause
/// inside a `DoNotRetryIOException`.
pub const ILLEGAL_ARGUMENT: &str = "java.lang.IllegalArgumentException";
/// `java.io.IOException`: a failure the client may retry.
pub const IO_EXCEPTION: &str = "java.io.IOException";

/// A failed call: what the client will throw.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RpcError {
    /// The Java exception class.
    pub class: &'static str,
    /// Its message.
    pub message: String,
    /// Whether the client must not retry (HBase sets it for `DoNotRetryIOException` and its
    /// subclasses).
    pub do_not_retry: bool,
}

impl RpcError {
    /// A failure of class `class`.
    pub fn new(class: &'static str, message: impl Into<String>, do_not_retry: bool) -> RpcError {
        RpcError {
            class,
            message: message.into(),
            do_not_retry,
        }
    }

    /// A `DoNotRetryIOException`: the request itself is wrong.
    pub fn bad_request(message: impl Into<String>) -> RpcError {
        RpcError::new(DO_NOT_RETRY, message, true)
    }

    /// The ResponseHeader's exception.
    pub fn to_response(&self) -> pb::ExceptionResponse {
        cairn_rpc::wire::exception(self.class, &self.message, self.do_not_retry)
    }

    /// The form a Multi's per-action and per-region failures take (`NameBytesPair`: the class
    /// name, and the message as bytes, which the client passes to the class's constructor).
    pub fn to_name_bytes(&self) -> pb::NameBytesPair {
        pb::NameBytesPair {
            name: self.class.to_string(),
            value: Some(self.message.clone().into_bytes()),
        }
    }
}

impl std::fmt::Display for RpcError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}: {}", self.class, self.message)
    }
}

impl From<RegionError> for RpcError {
    fn from(e: RegionError) -> RpcError {
        let msg = e.to_string();
        match e {
            RegionError::TableNotFound(name) => RpcError::new(TABLE_NOT_FOUND, name, true),
            RegionError::TableExists(name) => RpcError::new(TABLE_EXISTS, name, true),
            RegionError::TableDisabled(name) => RpcError::new(TABLE_NOT_ENABLED, name, true),
            RegionError::NoSuchFamily { .. } => RpcError::new(NO_SUCH_COLUMN_FAMILY, msg, true),
            RegionError::RegionTooBusy { .. } => RpcError::new(REGION_TOO_BUSY, msg, false),
            RegionError::NotServingRegion(_) | RegionError::Closed => {
                RpcError::new(NOT_SERVING_REGION, msg, false)
            }
            RegionError::WrongRegion { .. } => RpcError::new(WRONG_REGION, msg, false),
            // HBase's `DoNotRetryIOException(IllegalArgumentException)`: the message is the
            // cause's `toString`.
            RegionError::IllegalArgument(m) => {
                RpcError::bad_request(format!("{ILLEGAL_ARGUMENT}: {m}"))
            }
            // HBase's `Mutation.checkRow`, whichever layer noticed it.
            RegionError::Cell(c @ cairn_cell::CellError::RowTooLong(_)) => {
                RpcError::bad_request(format!("{ILLEGAL_ARGUMENT}: {c}"))
            }
            RegionError::InvalidArgument(_)
            | RegionError::Unsupported(_)
            | RegionError::Filter(_)
            | RegionError::Cell(_) => RpcError::bad_request(msg),
            // Storage failures: the client retries (the fault may clear).
            _ => RpcError::new(IO_EXCEPTION, msg, false),
        }
    }
}

impl From<WireError> for RpcError {
    fn from(e: WireError) -> RpcError {
        RpcError::bad_request(e.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn region_errors_map_to_hbase_classes() {
        let e = RpcError::from(RegionError::NoSuchFamily {
            table: "t".into(),
            family: "x".into(),
        });
        assert_eq!(e.class, NO_SUCH_COLUMN_FAMILY);
        assert!(e.do_not_retry);
        for global in [false, true] {
            let e = RpcError::from(RegionError::RegionTooBusy {
                region: "r".into(),
                size: 2,
                limit: 1,
                global,
            });
            assert_eq!(e.class, REGION_TOO_BUSY);
            assert!(!e.do_not_retry, "the client backs off and retries");
        }
        assert_eq!(
            RpcError::from(RegionError::TableNotFound("ns:t".into())).message,
            "ns:t",
            "the client builds TableNotFoundException(table name)"
        );
        assert_eq!(
            RpcError::from(RegionError::Closed).class,
            NOT_SERVING_REGION
        );
        assert!(RpcError::from(RegionError::InvalidArgument("x".into())).do_not_retry);
        let e = RpcError::from(RegionError::IllegalArgument("Row length 9 is > 8".into()));
        assert_eq!(
            (e.class, e.message.as_str(), e.do_not_retry),
            (
                DO_NOT_RETRY,
                "java.lang.IllegalArgumentException: Row length 9 is > 8",
                true
            )
        );
    }
}
