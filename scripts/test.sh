#!/usr/bin/env bash
# cairn's whole test suite. Installs what the tests need from the public registries, then runs
# every check: format, lints, unit/property/end-to-end tests (once per checksum kernel), a
# benchmark smoke run and a short fuzzing run. CI runs exactly this (.ci/run).
set -euo pipefail
cd "$(dirname "$0")/.."

# Each step's wall time, printed as it ends and all together at the end: CI's budget is
# 45 minutes on 2 cores, and this says where it goes.
suite_start=$(date +%s)
step_name=
step_start=
timings=()
end_step() {
    if [ -n "$step_name" ]; then
        local took=$(($(date +%s) - step_start))
        timings+=("$(printf '%5d s  %s' "$took" "$step_name")")
        printf '    (%d s)\n' "$took"
    fi
}
step() {
    end_step
    step_name=$*
    step_start=$(date +%s)
    printf '\n==> %s   [%s, %d s in]\n' "$*" "$(date -u +%T)" $((step_start - suite_start))
}

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
command -v java >/dev/null 2>&1 || { echo "java (17+) is required"; exit 1; }
command -v mvn >/dev/null 2>&1 || { echo "mvn is required"; exit 1; }

# The Java side (HBase 2.6.1's jars with PerformanceEvaluation, ZooKeeper 3.8.4 and YCSB's core
# for the interop tests; Hadoop 3.4.1's MiniDFSCluster for the HDFS ones) is fetched from Maven
# Central while the lints compile: the two are independent, and the downloads wait on the
# network, not the cores.
mkdir -p target
( mvn -q -B -f interop/hbase/pom.xml package -DskipTests &&
    mvn -q -B -f interop/hdfs/pom.xml package -DskipTests ) >target/mvn.log 2>&1 &
mvn_pid=$!

step "format"
cargo fmt --all -- --check
cargo fmt --manifest-path fuzz/Cargo.toml -- --check

step "lints (the default build, HDFS included)"
cargo clippy --workspace --all-targets --locked -- -D warnings

step "unused dependencies (cargo-machete from crates.io)"
if ! cargo machete --version >/dev/null 2>&1; then
    cargo install cargo-machete --version 0.9.2 --locked
fi
cargo machete

step "happybase, pytest and prometheus_client from PyPI (happybase 1.3.0)"
# In a virtual environment of its own: a system Python marked externally managed (PEP 668)
# refuses `pip install`, and the machine's packages stay as they are. Made before the Rust
# tests, whose TLS, limits and split tests drive happybase.
venv=target/venv
[ -x "$venv/bin/python" ] || python3 -m venv "$venv"
"$venv/bin/python" -m pip install --quiet --disable-pip-version-check happybase==1.3.0 pytest \
    prometheus-client==0.21.1

step "promtool and chromium (Debian's prometheus and chromium packages), when missing"
# Prometheus' own linter checks /metrics and /prometheus; headless Chromium renders the status
# page (crates/cairn-server/tests/info_server.rs). Installed only when absent.
missing=()
command -v promtool >/dev/null 2>&1 || missing+=(prometheus)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
if [ ${#missing[@]} -gt 0 ]; then
    sudo=
    [ "$(id -u)" -eq 0 ] || sudo=sudo
    $sudo apt-get update -q
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -q --no-install-recommends "${missing[@]}"
    # Only promtool is wanted: on a machine with systemd the package also starts a Prometheus
    # server on port 9090, Thrift's default port.
    if [[ " ${missing[*]} " == *" prometheus "* ]] && command -v systemctl >/dev/null 2>&1; then
        $sudo systemctl disable --now prometheus prometheus-node-exporter >/dev/null 2>&1 || true
    fi
fi
export CAIRN_REQUIRE_PROMTOOL=1 CAIRN_REQUIRE_CHROMIUM=1

step "HBase 2.6.1 and Hadoop 3.4.1 jars (Maven Central; fetched during the lints)"
wait "$mvn_pid" || { cat target/mvn.log; exit 1; }
export CAIRN_REQUIRE_HBASE_INTEROP=1 CAIRN_REQUIRE_HDFS=1

step "tests (kernel chosen at run time; HBase, ZooKeeper and HDFS interop included)"
CAIRN_REQUIRE_TLS_CLIENTS=1 cargo test --workspace --locked

step "happybase against cairn serve, on local disk and on HDFS"
# The binary the tests built and ran (target/debug/cairn). No `cargo build` here: a build of
# cairn-cli alone resolves features without the tests' dev-dependencies and would compile it
# again (~3 minutes).
test -x target/debug/cairn
CAIRN_BIN=target/debug/cairn "$venv/bin/python" -m pytest -q tests/happybase
CAIRN_BIN=target/debug/cairn CAIRN_HAPPYBASE_HDFS=1 "$venv/bin/python" -m pytest -q tests/happybase

step "tests with the portable kernel forced (what the kernel computes: checksums, HFiles)"
# The unit tests, and the integration tests whose results depend on the checksum kernel
# (checksum properties, HFiles both ways with HBase, the checksum and hfile subcommands); the
# rest ran above. Selected with --workspace, as above, so features resolve as they did there
# and nothing is compiled again (`-p cairn-cli` alone would rebuild three crates).
kernel_tests=(--workspace --locked --lib --test properties --test roundtrip --test hbase_interop
    --test cli --test hfile_cli)
CAIRN_CHECKSUM_IMPL=portable cargo test "${kernel_tests[@]}"

step "tests with the crate kernels forced"
CAIRN_CHECKSUM_IMPL=crates cargo test --workspace --locked --lib --test properties

step "model check of the block cache's slot protocol (loom)"
RUSTFLAGS="--cfg loom" cargo test --locked -p cairn-blockcache --lib --release --target-dir target/loom loom
rm -rf target/loom

step "benchmark smoke runs (tiny sizes, the tests' build: they only have to run)"
# `--profile dev` reuses what the tests compiled: a release build of the workspace would cost
# ~15 minutes of CI for numbers nobody reads. bench/ scripts measure with release builds.
# --workspace (a bench picked by name) keeps the features the tests resolved: `-p` would build
# the crate again with fewer.
smoke=(--locked --profile dev --workspace)
CAIRN_BENCH_QUICK=1 cargo bench "${smoke[@]}" --bench hdfs_vs_local
CAIRN_BENCH_QUICK=1 cargo bench "${smoke[@]}" --bench hdfs_reads
CAIRN_BENCH_QUICK=1 cargo bench "${smoke[@]}" --bench checksum -- block64k_chunk512
CAIRN_BENCH_QUICK=1 cargo bench "${smoke[@]}" --bench cache_hit -- cache_hit/l1
CAIRN_BENCH_CELLS=20000 CAIRN_BENCH_GETS=20000 cargo bench "${smoke[@]}" --bench cached_gets
CAIRN_BENCH_CELLS=20000 CAIRN_BENCH_ROUNDS=1 cargo bench "${smoke[@]}" --bench hfile_vs_hbase
CAIRN_BENCH_QUICK=1 cargo bench "${smoke[@]}" --bench wal_append
CAIRN_BENCH_QUICK=1 cargo bench "${smoke[@]}" --bench compaction_vs_hbase
# the side-by-side report (bench/report.sh) at tiny sizes; RocksDB stays out of CI (its C++
# build takes ~40 CPU-minutes), Pebble is a ~1 min `go build`, matplotlib comes from PyPI
CAIRN_BENCH_BIN=target/debug/cairn CAIRN_BENCH_SKIP_ROCKSDB=1 ROUNDS=1 CAIRN_BENCH_ROWS=20000 \
    CAIRN_BENCH_SCANS=20 CAIRN_BENCH_WRITE_ROWS=20000 CAIRN_BENCH_COMPACT_ROWS=2000 \
    CAIRN_BENCH_OUT=target/bench-report-smoke bench/report.sh >/dev/null
disk

step "fuzzing (nightly toolchain and cargo-fuzz from the registries; a fixed total budget)"
rustup toolchain install nightly --profile minimal
if ! cargo fuzz --version >/dev/null 2>&1; then
    cargo install cargo-fuzz --version 0.13.2 --locked
fi
targets=$(cd fuzz && cargo +nightly fuzz list)
# One build of every target, then CAIRN_FUZZ_SECONDS (default 150) shared among them.
(cd fuzz && cargo +nightly fuzz build)
per=$(( ${CAIRN_FUZZ_SECONDS:-150} / $(echo "$targets" | wc -w) ))
[ "$per" -ge 5 ] || per=5
for target in $targets; do
    (cd fuzz && cargo +nightly fuzz run "$target" -- -max_total_time="$per")
done

end_step
disk
printf '\n==> all checks passed in %d s\n' $(($(date +%s) - suite_start))
printf '%s\n' "${timings[@]}"
