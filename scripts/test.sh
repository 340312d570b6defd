#!/usr/bin/env bash
# cairn's whole test suite. Installs what the tests need from the public registries, then runs
# every check: format, lints, unit/property/end-to-end tests (once per checksum kernel), a
# benchmark smoke run and a short fuzzing run. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

step() { printf '\n==> %s\n' "$*"; }

# CI machines have little free disk (a clean run once died with "No space left on device" while
# compiling hdfs-native). Full debug info and incremental caches made target/ ~11 GB; line tables
# keep backtraces useful at a fraction of that, and incremental caches never pay off in a one-shot
# run. Set here, once, so every cargo call below shares the same fingerprints.
export CARGO_INCREMENTAL=0
export CARGO_PROFILE_DEV_DEBUG=line-tables-only
export CARGO_PROFILE_TEST_DEBUG=line-tables-only
export CARGO_PROFILE_RELEASE_DEBUG=0
export CARGO_PROFILE_BENCH_DEBUG=0
disk() { df -h . | tail -1 | awk '{print "disk: " $4 " free of " $2}'; du -sh target 2>/dev/null || true; }
disk

step "Rust toolchain"
if ! command -v cargo >/dev/null 2>&1; then
    curl --proto '=https' --tlsv1.2 -sSf https://sh.rustup.rs | sh -s -- -y --profile minimal
    # shellcheck disable=SC1091
    . "$HOME/.cargo/env"
fi
rustup component add rustfmt clippy
cargo --version

step "HBase 2.6.1 jars for the interop tests (Maven Central)"
command -v java >/dev/null 2>&1 || { echo "java (17+) is required"; exit 1; }
command -v mvn >/dev/null 2>&1 || { echo "mvn is required"; exit 1; }
mvn -q -B -f interop/hbase/pom.xml package -DskipTests
export CAIRN_REQUIRE_HBASE_INTEROP=1

step "format"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check

step "lints"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "unused dependencies (cargo-machete from crates.io)"
if ! cargo machete --version >/dev/null 2>&1; then
    cargo install cargo-machete --version 0.9.2 --locked
fi
cargo machete

step "happybase and pytest from PyPI (happybase 1.3.0)"
# In a virtual environment of its own: a system Python marked externally managed (PEP 668)
# refuses `pip install`, and the machine's packages stay as they are. Made before the Rust
# tests, whose TLS test drives happybase over thriftpy2's TLS socket.
venv=target/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check happybase==1.3.0 pytest

step "tests (kernel chosen at run time)"
CAIRN_REQUIRE_TLS_CLIENTS=1 cargo test --workspace --locked

step "happybase against cairn serve"
cargo build --locked -p cairn-cli
CAIRN_BIN=target/debug/cairn "$venv/bin/python" -m pytest -q tests/happybase

step "HDFS: MiniDFSCluster (hadoop-minicluster 3.4.1 from Maven Central), the hdfs feature"
mvn -q -B -f interop/hdfs/pom.xml package -DskipTests
export CAIRN_REQUIRE_HDFS=1
cargo clippy --locked -p cairn-fs -p cairn-wal -p cairn-region -p cairn-server -p cairn-cli \
    --features cairn-cli/hdfs --all-targets -- -D warnings
cargo test --locked -p cairn-fs -p cairn-region --features cairn-region/hdfs --lib --test hdfs
# happybase against cairn serve with its data and WAL on HDFS
cargo build --locked -p cairn-cli --features hdfs
CAIRN_BIN=target/debug/cairn CAIRN_HAPPYBASE_HDFS=1 "$venv/bin/python" -m pytest -q tests/happybase

step "tests with the portable kernel forced"
CAIRN_CHECKSUM_IMPL=portable cargo test --locked -p cairn-checksum -p cairn-cli

step "tests with the crate kernels forced"
CAIRN_CHECKSUM_IMPL=crates cargo test --locked -p cairn-checksum
disk
# Nothing below uses the debug build; drop it before the release builds to halve peak disk use.
rm -rf target/debug

step "model check of the block cache's slot protocol (loom)"
RUSTFLAGS="--cfg loom" cargo test --locked -p cairn-blockcache --lib --release --target-dir target/loom loom

step "benchmark smoke runs (tiny sizes: they only have to run)"
CAIRN_BENCH_QUICK=1 cargo bench --locked -p cairn-region --features hdfs --bench hdfs_vs_local
CAIRN_BENCH_QUICK=1 cargo bench --locked -p cairn-fs --features hdfs --bench hdfs_reads
CAIRN_BENCH_QUICK=1 cargo bench --locked -p cairn-checksum --bench checksum -- block64k_chunk512
CAIRN_BENCH_QUICK=1 cargo bench --locked -p cairn-blockcache --bench cache_hit -- cache_hit/l1
CAIRN_BENCH_CELLS=20000 CAIRN_BENCH_GETS=20000 cargo bench --locked -p cairn-blockcache --bench cached_gets
CAIRN_BENCH_CELLS=20000 CAIRN_BENCH_ROUNDS=1 cargo bench --locked -p cairn-hfile --bench hfile_vs_hbase
CAIRN_BENCH_QUICK=1 cargo bench --locked -p cairn-wal --bench wal_append
CAIRN_BENCH_QUICK=1 cargo bench --locked -p cairn-cli --bench compaction_vs_hbase
# the side-by-side report (bench/report.sh) at tiny sizes; RocksDB stays out of CI (its C++
# build takes ~40 CPU-minutes), Pebble is a ~1 min `go build`, matplotlib comes from PyPI
CAIRN_BENCH_SKIP_ROCKSDB=1 ROUNDS=1 CAIRN_BENCH_ROWS=20000 CAIRN_BENCH_SCANS=20 \
    CAIRN_BENCH_WRITE_ROWS=20000 CAIRN_BENCH_COMPACT_ROWS=2000 \
    CAIRN_BENCH_OUT=target/bench-report-smoke bench/report.sh >/dev/null

step "fuzzing (nightly toolchain and cargo-fuzz from the registries)"
rustup toolchain install nightly --profile minimal
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --version 0.13.2 --locked
fi
for target in $(cd fuzz && cargo +nightly fuzz list); do
    (cd fuzz && cargo +nightly fuzz run "$target" -- -max_total_time="${CAIRN_FUZZ_SECONDS:-30}")
done

disk
step "all checks passed"
