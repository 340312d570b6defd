//! Thrift's `TScan.cacheBlocks = false` reaches the block reader: a scan opened with it reads
//! every row without adding a data block to the cache; the same scan with caching on fills
//! it. Data blocks go to the L2 cache here, so its block count is exactly the data blocks
//! cached.

use std::collections::BTreeMap;
use std::sync::Arc;

use cairn_region::{RegionServer, ServerConfig, TableName};
use cairn_server::{Config, Server};
use cairn_thrift::hbase::{
    BatchMutation, ColumnDescriptor, HbaseSyncClient, Mutation, THbaseSyncClient, TScan,
};
use cairn_thrift::thrift;
use thrift::protocol::{TBinaryInputProtocol, TBinaryOutputProtocol};
use thrift::transport::{TBufferedReadTransport, TBufferedWriteTransport, TIoChannel, TTcpChannel};

#[test]
fn a_thrift_scan_with_cache_blocks_false_caches_no_data_block() {
    let dir = tempfile::tempdir().unwrap();
    let mut rc = ServerConfig::new(dir.path());
    rc.background = false;
    rc.block_cache = Some(
        cairn_blockcache::BlockCacheConfig::from_properties([
            ("hbase.bucketcache.ioengine", "offheap"),
            ("hbase.bucketcache.size", "64"),
        ])
        .unwrap(),
    );
    let rs: Arc<RegionServer> = RegionServer::open(rc).unwrap();
    let server = Server::start_with(
        rs.clone(),
        Config {
            data_dir: dir.path().to_path_buf(),
            thrift_addr: "127.0.0.1:0".into(),
            http_addr: None,
            rpc: None,
            info_addr: None,
            ..Config::default()
        },
    )
    .unwrap();
    let mut ch = TTcpChannel::new();
    ch.open(server.thrift_addr().to_string()).unwrap();
    let (r, w) = ch.split().unwrap();
    let mut c = HbaseSyncClient::new(
        TBinaryInputProtocol::new(TBufferedReadTransport::new(r), true),
        TBinaryOutputProtocol::new(TBufferedWriteTransport::new(w), true),
    );
    let no_attrs = BTreeMap::<Vec<u8>, Vec<u8>>::new;
    let t = b"cacheblocks".to_vec();
    c.create_table(
        t.clone(),
        vec![ColumnDescriptor {
            name: Some(b"f:".to_vec()),
            max_versions: Some(1),
            // Thrift's IDL defaults it to false, which would leave every block uncached.
            block_cache_enabled: Some(true),
            ..ColumnDescriptor::default()
        }],
    )
    .unwrap();
    let batches = (0..3000u32)
        .map(|i| BatchMutation {
            row: Some(format!("r{i:05}").into_bytes()),
            mutations: Some(vec![Mutation {
                is_delete: Some(false),
                column: Some(b"f:q".to_vec()),
                value: Some(format!("value-{i:05}").repeat(60).into_bytes()),
                write_to_w_a_l: Some(true),
            }]),
        })
        .collect();
    c.mutate_rows(t.clone(), batches, no_attrs()).unwrap();
    rs.flush_table(&TableName::parse("cacheblocks").unwrap())
        .unwrap();
    let l2_blocks = || {
        let cache = rs.block_cache().unwrap();
        cache.l2().unwrap().wait_for_writes();
        cache.stats().1.unwrap().block_count
    };
    let mut scan_all = |cache_blocks: Option<bool>| {
        let scan = TScan {
            start_row: None,
            stop_row: None,
            timestamp: None,
            columns: None,
            caching: None,
            filter_string: None,
            batch_size: None,
            sort_columns: None,
            reversed: None,
            cache_blocks,
        };
        let id = c
            .scanner_open_with_scan(t.clone(), scan, no_attrs())
            .unwrap();
        let mut n = 0;
        loop {
            let rows = c.scanner_get_list(id, 500).unwrap();
            if rows.is_empty() {
                break;
            }
            n += rows.len();
        }
        c.scanner_close(id).unwrap();
        n
    };
    assert_eq!(scan_all(Some(false)), 3000);
    assert_eq!(
        l2_blocks(),
        0,
        "data blocks cached by a cacheBlocks=false scan"
    );
    assert_eq!(scan_all(None), 3000);
    assert!(
        l2_blocks() >= 20,
        "a caching scan cached only {}",
        l2_blocks()
    );
    server.shutdown().unwrap();
}
