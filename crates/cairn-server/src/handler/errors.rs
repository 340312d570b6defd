//! Region-store errors as the Thrift exceptions each method declares: `IOError` always,
//! `IllegalArgument` only where the IDL lists it (otherwise the message travels as an
//! `IOError`), `AlreadyExists` for `createTable`.

use cairn_region::RegionError;
use cairn_thrift::hbase::{AlreadyExists, IOError, IllegalArgument};
use cairn_thrift::thrift;

/// An `IOError` with `msg` (HBase's handler never sets `canRetry`).
pub(super) fn io_error(msg: impl std::fmt::Display) -> thrift::Error {
    thrift::Error::User(Box::new(IOError {
        message: Some(msg.to_string()),
        can_retry: Some(false),
    }))
}

/// An `IllegalArgument` with `msg`.
pub(super) fn illegal(msg: impl std::fmt::Display) -> thrift::Error {
    thrift::Error::User(Box::new(IllegalArgument {
        message: Some(msg.to_string()),
    }))
}

/// A region-store error for a method that declares only `IOError`.
pub(super) fn io(e: RegionError) -> thrift::Error {
    io_error(e)
}

/// A region-store error for a method that declares `IllegalArgument` too.
pub(super) fn io_or_illegal(e: RegionError) -> thrift::Error {
    match e {
        RegionError::InvalidArgument(_)
        | RegionError::IllegalArgument(_)
        | RegionError::Filter(_)
        | RegionError::Cell(_) => illegal(e),
        e => io_error(e),
    }
}

/// A `createTable` error: `AlreadyExists` for a table that is there, `IllegalArgument` for a
/// descriptor the store refuses.
pub(super) fn create_table_error(e: RegionError) -> thrift::Error {
    match e {
        RegionError::TableExists(m) => thrift::Error::User(Box::new(AlreadyExists {
            message: Some(format!("table {m} already exists")),
        })),
        e @ (RegionError::InvalidArgument(_)
        | RegionError::IllegalArgument(_)
        | RegionError::Unsupported(_)) => illegal(e),
        e => io_error(e),
    }
}

/// The message of an `IOError` or `IllegalArgument` (the text of any other error).
pub(super) fn message(e: &thrift::Error) -> String {
    match e {
        thrift::Error::User(u) => {
            if let Some(x) = u.downcast_ref::<IOError>() {
                x.message.clone().unwrap_or_default()
            } else if let Some(x) = u.downcast_ref::<IllegalArgument>() {
                x.message.clone().unwrap_or_default()
            } else {
                u.to_string()
            }
        }
        e => e.to_string(),
    }
}

/// For methods that declare only `IOError`: an `IllegalArgument` becomes an `IOError` with its
/// message.
pub(super) fn as_io(e: thrift::Error) -> thrift::Error {
    match &e {
        thrift::Error::User(u) if u.downcast_ref::<IllegalArgument>().is_some() => {
            io_error(message(&e))
        }
        _ => e,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn argument_errors_are_illegal_only_where_declared() {
        let bad = || RegionError::InvalidArgument("bad row".into());
        let is_illegal = |e: &thrift::Error| matches!(e, thrift::Error::User(u) if u.downcast_ref::<IllegalArgument>().is_some());
        assert!(is_illegal(&io_or_illegal(bad())));
        assert!(!is_illegal(&io(bad())));
        let e = as_io(illegal("x: y"));
        assert!(!is_illegal(&e));
        assert_eq!(message(&e), "x: y");
    }
}
