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
/// `CHECKSUM_CRC32`: zlib's CRC-32 polynomial (older clusters).
pub const CHECKSUM_CRC32: i32 = 1;
/// `CHECKSUM_CRC32C`: Castagnoli CRC-32, HDFS's default (`dfs.checksum.type`).
pub const CHECKSUM_CRC32C: i32 = 2;

/// `RpcHeader.proto`: the header before every Hadoop IPC call.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcRequestHeaderProto {
    /// Always [`RPC_PROTOCOL_BUFFER`].
    #[prost(int32, optional, tag = "1")]
    pub rpc_kind: Option<i32>,
    /// Always [`RPC_FINAL_PACKET`] (cairn sends no multi-packet calls).
    #[prost(int32, optional, tag = "2")]
    pub rpc_op: Option<i32>,
    /// Matches the answer to the call; negative ids are reserved (-3 for the connection context).
    #[prost(sint32, required, tag = "3")]
    pub call_id: i32,
    /// Sixteen bytes unique to the client: with the call id, the key of the NameNode's retry cache.
    #[prost(bytes = "vec", required, tag = "4")]
    pub client_id: Vec<u8>,
    /// Retries of this call so far; -1 when the client does not count them.
    #[prost(sint32, optional, tag = "5")]
    pub retry_count: Option<i32>,
}

/// `RpcHeader.proto`: the header of every answer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RpcResponseHeaderProto {
    /// The call answered.
    #[prost(uint32, required, tag = "1")]
    pub call_id: u32,
    /// `RpcStatusProto`: [`RPC_SUCCESS`], else ERROR (1, the call failed) or FATAL (2, the
    /// connection is done).
    #[prost(int32, required, tag = "2")]
    pub status: i32,
    /// On error, the Java class of the server's exception (`java.io.FileNotFoundException`...).
    #[prost(string, optional, tag = "4")]
    pub exception_class_name: Option<String>,
    /// On error, the exception's message.
    #[prost(string, optional, tag = "5")]
    pub error_msg: Option<String>,
}

/// `IpcConnectionContext.proto`: who the client is (simple authentication).
#[derive(Clone, PartialEq, prost::Message)]
pub struct UserInformationProto {
    /// The user the NameNode checks permissions as
    /// ([`namenode::effective_user`](super::namenode::effective_user)).
    #[prost(string, optional, tag = "1")]
    pub effective_user: Option<String>,
}

/// `IpcConnectionContext.proto`: sent once, after the connection header, before any call.
#[derive(Clone, PartialEq, prost::Message)]
pub struct IpcConnectionContextProto {
    /// The client's user.
    #[prost(message, optional, tag = "2")]
    pub user_info: Option<UserInformationProto>,
    /// The protocol the connection is for (`ClientProtocol`'s class name).
    #[prost(string, optional, tag = "3")]
    pub protocol: Option<String>,
}

/// `ProtobufRpcEngine2.proto`: which method of which protocol a call is.
#[derive(Clone, PartialEq, prost::Message)]
pub struct RequestHeaderProto {
    /// The method called (`getBlockLocations`, `reportBadBlocks`).
    #[prost(string, required, tag = "1")]
    pub method_name: String,
    /// The Java interface declaring it (`org.apache.hadoop.hdfs.protocol.ClientProtocol`).
    #[prost(string, required, tag = "2")]
    pub declaring_class_protocol_name: String,
    /// The protocol's version, 1 for `ClientProtocol`.
    #[prost(uint64, required, tag = "3")]
    pub client_protocol_version: u64,
}

/// `Security.proto`: a block access token the NameNode hands out with each block, which the
/// DataNode checks (empty when block tokens are off).
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct TokenProto {
    /// The token's identifier bytes.
    #[prost(bytes = "vec", required, tag = "1")]
    pub identifier: Vec<u8>,
    /// Its signature.
    #[prost(bytes = "vec", required, tag = "2")]
    pub password: Vec<u8>,
    /// Its kind (`HDFS_BLOCK_TOKEN`; empty when tokens are off).
    #[prost(string, required, tag = "3")]
    pub kind: String,
    /// The service it is for (often empty for block tokens).
    #[prost(string, required, tag = "4")]
    pub service: String,
}

/// `hdfs.proto`: a block's identity in a cluster.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct ExtendedBlockProto {
    /// The block pool (one per namespace).
    #[prost(string, required, tag = "1")]
    pub pool_id: String,
    /// The block's id within its pool.
    #[prost(uint64, required, tag = "2")]
    pub block_id: u64,
    /// Bumped when a block is recovered or appended to, so stale replicas are told apart.
    #[prost(uint64, required, tag = "3")]
    pub generation_stamp: u64,
    /// The block's length as the NameNode knows it.
    #[prost(uint64, optional, tag = "4")]
    pub num_bytes: Option<u64>,
}

/// `hdfs.proto`: how to reach a DataNode.
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct DatanodeIdProto {
    /// Its IP address: what cairn connects to.
    #[prost(string, required, tag = "1")]
    pub ip_addr: String,
    /// Its host name (for messages).
    #[prost(string, required, tag = "2")]
    pub host_name: String,
    /// Its UUID, stable across restarts and address changes.
    #[prost(string, required, tag = "3")]
    pub datanode_uuid: String,
    /// The data transfer port (`dfs.datanode.address`), where blocks are read.
    #[prost(uint32, required, tag = "4")]
    pub xfer_port: u32,
    /// The HTTP port.
    #[prost(uint32, required, tag = "5")]
    pub info_port: u32,
    /// The IPC port.
    #[prost(uint32, required, tag = "6")]
    pub ipc_port: u32,
}

/// `hdfs.proto`: a DataNode holding a replica (only its id is read; the rest is skipped).
#[derive(Clone, PartialEq, Eq, Hash, prost::Message)]
pub struct DatanodeInfoProto {
    /// Where it is.
    #[prost(message, required, tag = "1")]
    pub id: DatanodeIdProto,
}

/// `hdfs.proto`: one block of a file and where its replicas are.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LocatedBlockProto {
    /// The block.
    #[prost(message, required, tag = "1")]
    pub b: ExtendedBlockProto,
    /// Offset of the block's first byte in the file.
    #[prost(uint64, required, tag = "2")]
    pub offset: u64,
    /// DataNodes with a replica, in the NameNode's order of preference (closest first).
    #[prost(message, repeated, tag = "3")]
    pub locs: Vec<DatanodeInfoProto>,
    /// Every replica is known to be corrupt.
    #[prost(bool, required, tag = "4")]
    pub corrupt: bool,
    /// The access token to present to the DataNodes.
    #[prost(message, required, tag = "5")]
    pub block_token: TokenProto,
    /// Storage type of each replica, in `locs` order; sent back when reporting a bad replica.
    #[prost(int32, repeated, packed = "false", tag = "7")]
    pub storage_types: Vec<i32>,
    /// Storage id of each replica, in `locs` order; sent back when reporting a bad replica.
    #[prost(string, repeated, tag = "8")]
    pub storage_ids: Vec<String>,
}

/// `hdfs.proto`: the blocks of a byte range of a file.
#[derive(Clone, PartialEq, prost::Message)]
pub struct LocatedBlocksProto {
    /// The file's length, not counting a last block still being written.
    #[prost(uint64, required, tag = "1")]
    pub file_length: u64,
    /// Blocks overlapping the range asked, in file order.
    #[prost(message, repeated, tag = "2")]
    pub blocks: Vec<LocatedBlockProto>,
    /// The file is open for writing.
    #[prost(bool, required, tag = "3")]
    pub under_construction: bool,
    /// The file's last block (being written, when `under_construction`).
    #[prost(message, optional, tag = "4")]
    pub last_block: Option<LocatedBlockProto>,
    /// Whether that last block is complete (its length is final).
    #[prost(bool, required, tag = "5")]
    pub is_last_block_complete: bool,
}

/// `ClientNamenodeProtocol.proto`: `getBlockLocations`' arguments.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBlockLocationsRequestProto {
    /// The file's path, without scheme and authority.
    #[prost(string, required, tag = "1")]
    pub src: String,
    /// Start of the byte range.
    #[prost(uint64, required, tag = "2")]
    pub offset: u64,
    /// Length of the byte range.
    #[prost(uint64, required, tag = "3")]
    pub length: u64,
}

/// `ClientNamenodeProtocol.proto`: `getBlockLocations`' answer.
#[derive(Clone, PartialEq, prost::Message)]
pub struct GetBlockLocationsResponseProto {
    /// The blocks; absent when the file does not exist.
    #[prost(message, optional, tag = "1")]
    pub locations: Option<LocatedBlocksProto>,
}

/// `ClientNamenodeProtocol.proto`: `reportBadBlocks`' arguments, so the NameNode re-replicates
/// from a good copy.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReportBadBlocksRequestProto {
    /// Each block with only its bad replicas in `locs`.
    #[prost(message, repeated, tag = "1")]
    pub blocks: Vec<LocatedBlockProto>,
}

/// An answer with no fields (`ReportBadBlocksResponseProto`).
#[derive(Clone, PartialEq, prost::Message)]
pub struct EmptyResponseProto {}

/// `datatransfer.proto`: which block an operation is on.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BaseHeaderProto {
    /// The block.
    #[prost(message, required, tag = "1")]
    pub block: ExtendedBlockProto,
    /// Its access token, from the NameNode.
    #[prost(message, optional, tag = "2")]
    pub token: Option<TokenProto>,
}

/// `datatransfer.proto`: the header of a client's operation on a DataNode.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClientOperationHeaderProto {
    /// Block and token.
    #[prost(message, required, tag = "1")]
    pub base_header: BaseHeaderProto,
    /// The client's name, as DataNode logs show it.
    #[prost(string, required, tag = "2")]
    pub client_name: String,
}

/// `datatransfer.proto`: `OP_READ_BLOCK`, a read of a byte range of one replica.
#[derive(Clone, PartialEq, prost::Message)]
pub struct OpReadBlockProto {
    /// Block, token and client.
    #[prost(message, required, tag = "1")]
    pub header: ClientOperationHeaderProto,
    /// Offset within the block.
    #[prost(uint64, required, tag = "2")]
    pub offset: u64,
    /// Bytes to read.
    #[prost(uint64, required, tag = "3")]
    pub len: u64,
    /// Whether the DataNode sends its chunk checksums; off when the reader verifies checksums
    /// of its own (HBase's store file blocks carry them).
    #[prost(bool, optional, tag = "4")]
    pub send_checksums: Option<bool>,
}

/// `datatransfer.proto`: a replica's checksum scheme.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ChecksumProto {
    /// `ChecksumTypeProto`: [`CHECKSUM_NULL`], [`CHECKSUM_CRC32`] or [`CHECKSUM_CRC32C`].
    #[prost(int32, required, tag = "1")]
    pub r#type: i32,
    /// Chunk size: bytes covered by one checksum (`dfs.bytes-per-checksum`, 512).
    #[prost(uint32, required, tag = "2")]
    pub bytes_per_checksum: u32,
}

/// `datatransfer.proto`: how a read's data is checksummed.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ReadOpChecksumInfoProto {
    /// The replica's checksum scheme.
    #[prost(message, required, tag = "1")]
    pub checksum: ChecksumProto,
    /// Offset in the block where the data sent starts: the chunk boundary at or before the
    /// offset asked, so the first chunk can be verified whole.
    #[prost(uint64, required, tag = "2")]
    pub chunk_offset: u64,
}

/// `datatransfer.proto`: the DataNode's answer to an operation, before any data.
#[derive(Clone, PartialEq, prost::Message)]
pub struct BlockOpResponseProto {
    /// `Status`: [`STATUS_SUCCESS`] or an error (the read failed; try another replica).
    #[prost(int32, required, tag = "1")]
    pub status: i32,
    /// For a read: the checksum scheme and where the data starts.
    #[prost(message, optional, tag = "4")]
    pub read_op_checksum_info: Option<ReadOpChecksumInfoProto>,
    /// On error, the DataNode's explanation.
    #[prost(string, optional, tag = "5")]
    pub message: Option<String>,
}

/// `datatransfer.proto`: the header of each packet of a read's data.
#[derive(Clone, PartialEq, prost::Message)]
pub struct PacketHeaderProto {
    /// Offset in the block of the packet's first data byte.
    #[prost(sfixed64, required, tag = "1")]
    pub offset_in_block: i64,
    /// The packet's sequence number in the read.
    #[prost(sfixed64, required, tag = "2")]
    pub seqno: i64,
    /// The empty packet that ends the read.
    #[prost(bool, required, tag = "3")]
    pub last_packet_in_block: bool,
    /// Data bytes in the packet (checksums not counted).
    #[prost(sfixed32, required, tag = "4")]
    pub data_len: i32,
}

/// `datatransfer.proto`: what the client tells the DataNode after a read completes.
#[derive(Clone, PartialEq, prost::Message)]
pub struct ClientReadStatusProto {
    /// [`STATUS_CHECKSUM_OK`] when the client verified every checksum (the DataNode then need not
    /// scan the replica), else [`STATUS_SUCCESS`].
    #[prost(int32, required, tag = "1")]
    pub status: i32,
}
