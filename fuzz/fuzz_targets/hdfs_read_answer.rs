//! Fuzzes the parsers of cairn's own HDFS reads: a DataNode's answer to `OP_READ_BLOCK` (the
//! response header, then packets of checksums and data), and a NameNode's response frame to
//! `getBlockLocations`. Any bytes must give exactly the range asked for (or a decoded answer)
//! or an error, never a panic. (That verified bytes are never wrong is the property test beside
//! the parser, which builds valid answers to damage.)
//!
//! The first input byte chooses: bit 6 set, the NameNode parser; else bit 7 says whether
//! checksums are verified and bits 0-5 the offset (in 16-byte units); the second byte is the
//! length (in 16-byte units). The rest is the answer.
#![no_main]

use cairn_fs::hdfs_protocol::datanode::read_block_answer;
use cairn_fs::hdfs_protocol::namenode::read_response;
use cairn_fs::hdfs_protocol::proto::GetBlockLocationsResponseProto;
use libfuzzer_sys::fuzz_target;

fuzz_target!(|data: &[u8]| {
    if data.len() < 2 {
        return;
    }
    let mut answer = &data[2..];
    if data[0] & 0x40 != 0 {
        let _ = read_response::<GetBlockLocationsResponseProto>(
            &mut answer,
            "nn:1",
            "getBlockLocations",
            u32::from(data[1]),
        );
        return;
    }
    let offset = u64::from(data[0] & 0x3f) * 16;
    let len = usize::from(data[1]) * 16 + 1;
    let verify = data[0] & 0x80 != 0;
    if let Ok((bytes, verified)) =
        read_block_answer(&mut answer, "dn:1", "blk_1_1", offset, len, verify)
    {
        assert_eq!(
            bytes.len(),
            len,
            "a successful read returns exactly the range"
        );
        assert_eq!(verified, verify);
    }
});
