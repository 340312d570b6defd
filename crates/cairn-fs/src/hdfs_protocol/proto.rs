//! The few Hadoop protocol buffers cairn's own HDFS reader speaks: Hadoop IPC's headers,
//! `ClientProtocol.getBlockLocations` / `reportBadBlocks`, and DataTransferProtocol's
//! `OP_READ_BLOCK`.
//!
//! Field numbers and types are those of Hadoop's `RpcHeader.proto`, `IpcConnectionContext.proto`,
//! `ProtobufRpcEngine2.proto`, `Security.proto`, `hdfs.proto`, `ClientNamenodeProtocol.proto`
//! and `datatransfer.proto` (Hadoop 3.x). Only the fields cairn reads or must send are
//! declared: protobuf decoders skip the others. Enums are carried as `int32`, which is the same
//! varint on the wire.

/// `RpcKindProto.RPC_PROTOCOL_BUFFER`.
pub const RPC_PROTOCOL_BUFFER: i32 = 2;
/// `RpcRequestHeaderProto.OperationProto.RPC_FINAL_PACKET`.
pub const RPC_FINAL_PACKET: i32 = 0;
/// `RpcResponseHeaderProto.RpcStatusProto.SUCCESS`.
pub const RPC_SUCCESS: i32 = 0;

/// `datatransfer.proto` `Status.SUCCESS`.
pub const STATUS_SUCCESS: i32 = 0;
/// `datatransfer.proto` `Status.CHECKSUM_OK`: the client verified every checksum it was sent.
pub const STATUS_CHECKSUM_OK: i32 = 6;

/// `hdfs.proto` `ChecksumTypeProto`.
pub const CHECKSUM_NULL: i32 = 0;
pub const CHECKSUM_CRC32: i32 = 1;
pub const CHECKSUM_CRC32C: i32 = 2;

#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcRequestHeaderProto {
    #[prost(int32, optional, tag = "1")]
    pub rpc_kind: Option<i32>,
    #[prost(int32, optional, tag = "2")]
    pub rpc_op: Option<i32>,
    #[prost(sint32, required, tag = "3")]
    pub call_id: i32,
    #[prost(bytes = "vec", required, tag = "4")]
    pub client_id: Vec<u8>,
    #[prost(sint32, optional, tag = "5")]
    pub retry_count: Option<i32>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcResponseHeaderProto {
    #[prost(uint32, required, tag = "1")]
    pub call_id: u32,
    #[prost(int32, required, tag = "2")]
    pub status: i32,
    #[prost(string, optional, tag = "4")]
    pub exception_class_name: Option<String>,
    #[prost(string, optional, tag = "5")]
    pub error_msg: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct UserInformationProto {
    #[prost(string, optional, tag = "1")]
    pub effective_user: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct IpcConnectionContextProto {
    #[prost(message, optional, tag = "2")]
    pub user_info: Option<UserInformationProto>,
    #[prost(string, optional, tag = "3")]
    pub protocol: Option<String>,
}

/// `ProtobufRpcEngine2.proto`: which method of which protocol a call is.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RequestHeaderProto {
    #[prost(string, required, tag = "1")]
    pub method_name: String,
    #[prost(string, required, tag = "2")]
    pub declaring_class_protocol_name: String,
    #[prost(uint64, required, tag = "3")]
    pub client_protocol_version: u64,
}

#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct TokenProto {
    #[prost(bytes = "vec", required, tag = "1")]
    pub identifier: Vec<u8>,
    #[prost(bytes = "vec", required, tag = "2")]
    pub password: Vec<u8>,
    #[prost(string, required, tag = "3")]
    pub kind: String,
    #[prost(string, required, tag = "4")]
    pub service: String,
}

#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct ExtendedBlockProto {
    #[prost(string, required, tag = "1")]
    pub pool_id: String,
    #[prost(uint64, required, tag = "2")]
    pub block_id: u64,
    #[prost(uint64, required, tag = "3")]
    pub generation_stamp: u64,
    #[prost(uint64, optional, tag = "4")]
    pub num_bytes: Option<u64>,
}

#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct DatanodeIdProto {
    #[prost(string, required, tag = "1")]
    pub ip_addr: String,
    #[prost(string, required, tag = "2")]
    pub host_name: String,
    #[prost(string, required, tag = "3")]
    pub datanode_uuid: String,
    #[prost(uint32, required, tag = "4")]
    pub xfer_port: u32,
    #[prost(uint32, required, tag = "5")]
    pub info_port: u32,
    #[prost(uint32, required, tag = "6")]
    pub ipc_port: u32,
}

#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct DatanodeInfoProto {
    #[prost(message, required, tag = "1")]
    pub id: DatanodeIdProto,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct LocatedBlockProto {
    #[prost(message, required, tag = "1")]
    pub b: ExtendedBlockProto,
    #[prost(uint64, required, tag = "2")]
    pub offset: u64,
    #[prost(message, repeated, tag = "3")]
    pub locs: Vec<DatanodeInfoProto>,
    #[prost(bool, required, tag = "4")]
    pub corrupt: bool,
    #[prost(message, required, tag = "5")]
    pub block_token: TokenProto,
    #[prost(int32, repeated, packed = "false", tag = "7")]
    pub storage_types: Vec<i32>,
    #[prost(string, repeated, tag = "8")]
    pub storage_ids: Vec<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct LocatedBlocksProto {
    #[prost(uint64, required, tag = "1")]
    pub file_length: u64,
    #[prost(message, repeated, tag = "2")]
    pub blocks: Vec<LocatedBlockProto>,
    #[prost(bool, required, tag = "3")]
    pub under_construction: bool,
    #[prost(message, optional, tag = "4")]
    pub last_block: Option<LocatedBlockProto>,
    #[prost(bool, required, tag = "5")]
    pub is_last_block_complete: bool,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBlockLocationsRequestProto {
    #[prost(string, required, tag = "1")]
    pub src: String,
    #[prost(uint64, required, tag = "2")]
    pub offset: u64,
    #[prost(uint64, required, tag = "3")]
    pub length: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBlockLocationsResponseProto {
    #[prost(message, optional, tag = "1")]
    pub locations: Option<LocatedBlocksProto>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ReportBadBlocksRequestProto {
    #[prost(message, repeated, tag = "1")]
    pub blocks: Vec<LocatedBlockProto>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct EmptyResponseProto {}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BaseHeaderProto {
    #[prost(message, required, tag = "1")]
    pub block: ExtendedBlockProto,
    #[prost(message, optional, tag = "2")]
    pub token: Option<TokenProto>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ClientOperationHeaderProto {
    #[prost(message, required, tag = "1")]
    pub base_header: BaseHeaderProto,
    #[prost(string, required, tag = "2")]
    pub client_name: String,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct OpReadBlockProto {
    #[prost(message, required, tag = "1")]
    pub header: ClientOperationHeaderProto,
    #[prost(uint64, required, tag = "2")]
    pub offset: u64,
    #[prost(uint64, required, tag = "3")]
    pub len: u64,
    #[prost(bool, optional, tag = "4")]
    pub send_checksums: Option<bool>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ChecksumProto {
    #[prost(int32, required, tag = "1")]
    pub r#type: i32,
    #[prost(uint32, required, tag = "2")]
    pub bytes_per_checksum: u32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadOpChecksumInfoProto {
    #[prost(message, required, tag = "1")]
    pub checksum: ChecksumProto,
    #[prost(uint64, required, tag = "2")]
    pub chunk_offset: u64,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct BlockOpResponseProto {
    #[prost(int32, required, tag = "1")]
    pub status: i32,
    #[prost(message, optional, tag = "4")]
    pub read_op_checksum_info: Option<ReadOpChecksumInfoProto>,
    #[prost(string, optional, tag = "5")]
    pub message: Option<String>,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct PacketHeaderProto {
    #[prost(sfixed64, required, tag = "1")]
    pub offset_in_block: i64,
    #[prost(sfixed64, required, tag = "2")]
    pub seqno: i64,
    #[prost(bool, required, tag = "3")]
    pub last_packet_in_block: bool,
    #[prost(sfixed32, required, tag = "4")]
    pub data_len: i32,
}

#[derive(Clone, PartialEq, prost::Message)]
pub struct ClientReadStatusProto {
    #[prost(int32, required, tag = "1")]
    pub status: i32,
}
