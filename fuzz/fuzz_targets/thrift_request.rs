//! Fuzzes what `cairn serve` reads off a socket: protocol and transport detection, framing, and
//! HBase's Thrift structs decoded through the guarded input protocol, with the connection loop
//! answering like the generated processor (unknown methods get an exception and their
//! arguments are skipped). Whatever the bytes, the loop must end with an outcome, never panic,
//! and never allocate past the request limit.
#![no_main]

use std::io::Cursor;

use cairn_thrift::hbase::{BatchMutation, ColumnDescriptor, Mutation, TIncrement, TScan};
use cairn_thrift::thrift::protocol::{
    TInputProtocol, TMessageIdentifier, TMessageType, TOutputProtocol, TSerializable, TType,
};
use cairn_thrift::thrift::server::TProcessor;
use cairn_thrift::thrift::{ApplicationError, ApplicationErrorKind};
use cairn_thrift::{serve_connection, ConnectionStats, Limits};
use libfuzzer_sys::fuzz_target;

/// Reads one struct of the kind the method name picks, as a generated processor reads its
/// arguments, and answers with an empty reply.
struct Decoder;

fn args<T: TSerializable>(i: &mut dyn TInputProtocol) -> cairn_thrift::thrift::Result<()> {
    i.read_struct_begin()?;
    loop {
        let f = i.read_field_begin()?;
        if f.field_type == TType::Stop {
            break;
        }
        match (f.id, f.field_type) {
            (Some(1), TType::Struct) => {
                T::read_from_in_protocol(i)?;
            }
            (Some(2), TType::List) => {
                let l = i.read_list_begin()?;
                for _ in 0..l.size {
                    T::read_from_in_protocol(i)?;
                }
                i.read_list_end()?;
            }
            (_, t) => i.skip(t)?,
        }
        i.read_field_end()?;
    }
    i.read_struct_end()
}

impl TProcessor for Decoder {
    fn process(
        &self,
        i: &mut dyn TInputProtocol,
        o: &mut dyn TOutputProtocol,
    ) -> cairn_thrift::thrift::Result<()> {
        let m = i.read_message_begin()?;
        let r = match m.name.as_str() {
            "scannerOpenWithScan" => args::<TScan>(i),
            "mutateRows" => args::<BatchMutation>(i),
            "mutateRow" => args::<Mutation>(i),
            "createTable" => args::<ColumnDescriptor>(i),
            "incrementRows" => args::<TIncrement>(i),
            "getRow" => i.skip(TType::Struct),
            _ => Err(cairn_thrift::thrift::Error::Application(
                ApplicationError::new(ApplicationErrorKind::UnknownMethod, "unknown"),
            )),
        };
        let kind = if r.is_ok() {
            TMessageType::Reply
        } else {
            TMessageType::Exception
        };
        o.write_message_begin(&TMessageIdentifier::new(m.name, kind, m.sequence_number))?;
        o.write_struct_begin(&cairn_thrift::thrift::protocol::TStructIdentifier::new("r"))?;
        o.write_field_stop()?;
        o.write_struct_end()?;
        o.write_message_end()?;
        o.flush()
    }
}

fuzz_target!(|data: &[u8]| {
    let limits = Limits {
        max_frame_bytes: 1 << 16,
        max_request_bytes: 1 << 16,
    };
    let stats = ConnectionStats::default();
    let mut out = Vec::new();
    let _ = serve_connection(
        Cursor::new(data.to_vec()),
        &mut out,
        &Decoder,
        &limits,
        &stats,
        &mut (),
    );
});
