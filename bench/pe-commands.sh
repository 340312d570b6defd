#!/usr/bin/env bash
# Runs HBase 2.6.1's own PerformanceEvaluation (`hbase pe --nomapred`, from the interop jars)
# against cairn, command by command, and checks that each one completes with the right row
# count. PE never checks what it wrote, so:
#   - write commands: a client full scan (dev.cairn.interop.CountRows) must see rows x clients;
#   - every command: PE's own "Finished class ... for N rows" lines must add up to rows x clients;
#   - increment / append / checkAndPut (all clients on the same rows 0..rows-1): CountRows on
#     the command's column must see `rows` rows, with counters summing to rows x clients
#     (increment), values of 26 x clients bytes (append: the 26-byte key appended once per
#     client) or 26 bytes (checkAndPut).
#
#   bench/pe-commands.sh [--cairn BIN]        # start `BIN serve` on free ports (default target/debug/cairn)
#   bench/pe-commands.sh --addr HOST:PORT     # a cairn (or HBase) already serving HBase RPC there
#                                             # (with no PE_CAS table yet: increment and append
#                                             # add to what an earlier run left there)
#   options: --zk HOST:PORT                   # the client finds the server through ZooKeeper
#                                             # (with --cairn: BIN serve --zookeeper HOST:PORT)
#            --zk start                       # ... a ZooKeeper started here from the interop jars
#            --rows N (default 1000)          # rows per client for the write and read commands
#            --md FILE                        # also write the table as Markdown to FILE
#            KEEP=1                           # keep the work dir (PE logs, server log)
#
# Prints one line per command: command | clients | options | rows expected | rows seen | ms
# (PE's slowest client) | PE rows/s | OK/FAIL; exits 1 if any FAIL. Needs java 17 and the
# interop jars (mvn -q -B -o -f interop/hbase/pom.xml package -DskipTests; done here if absent).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

bin=$root/target/debug/cairn
addr=
zk=
rows=1000
md=
while [ $# -gt 0 ]; do
    case "$1" in
        --cairn) bin=$2; shift 2 ;;
        --addr) addr=$2; shift 2 ;;
        --zk) zk=$2; shift 2 ;;
        --rows) rows=$2; shift 2 ;;
        --md) md=$2; shift 2 ;;
        *) echo "unknown argument $1 (see the header of $0)" >&2; exit 2 ;;
    esac
done

jar=$root/interop/hbase/target/cairn-hbase-interop-0.1.0.jar
if [ ! -f "$jar" ] || [ ! -d "$root/interop/hbase/target/lib" ]; then
    mvn -q -B -o -f interop/hbase/pom.xml package -DskipTests
fi

work=$(mktemp -d /tmp/pe-commands.XXXXXX)
server_pid=
zk_pid=
cleanup() {
    if [ -n "$server_pid" ] && kill -0 "$server_pid" 2>/dev/null; then
        kill -TERM "$server_pid" 2>/dev/null || true
        for _ in $(seq 1 40); do kill -0 "$server_pid" 2>/dev/null || break; sleep 0.25; done
        kill -KILL "$server_pid" 2>/dev/null || true
    fi
    if [ -n "$zk_pid" ]; then kill -TERM "$zk_pid" 2>/dev/null || true; wait "$zk_pid" 2>/dev/null || true; fi
    if [ -n "${KEEP:-}" ]; then echo "kept $work" >&2; else rm -rf "$work"; fi
}
trap cleanup EXIT

if [ "$zk" = start ]; then
    zk_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
    # port, data dir, tick ms, connections per client address (each PE thread opens a session)
    java -Xmx128m -Dzookeeper.admin.enableServer=false -cp "$root/interop/hbase/target/lib/*" \
        org.apache.zookeeper.server.ZooKeeperServerMain "$zk_port" "$work/zk" 2000 300 \
        >"$work/zookeeper.log" 2>&1 &
    zk_pid=$!
    zk=127.0.0.1:$zk_port
    zk_up=
    for _ in $(seq 1 240); do
        # `srvr` answers "Zookeeper version" once the server serves.
        if (exec 3<>"/dev/tcp/127.0.0.1/$zk_port" && printf srvr >&3 && grep -q 'Zookeeper version' <&3) 2>/dev/null; then
            zk_up=1
            break
        fi
        kill -0 "$zk_pid" 2>/dev/null || { cat "$work/zookeeper.log" >&2; exit 1; }
        sleep 0.25
    done
    [ -n "$zk_up" ] || { echo "ZooKeeper on $zk_port did not serve within 60 s" >&2; exit 1; }
    echo "zookeeper on $zk" >&2
fi

if [ -z "$addr" ]; then
    mkdir -p "$work/data"
    serve=("$bin" serve --data "$work/data" --thrift 127.0.0.1:0 --http "" --info "" --hbase 127.0.0.1:0)
    if [ -n "$zk" ]; then serve+=(--zookeeper "$zk"); fi
    "${serve[@]}" >"$work/serve.out" 2>"$work/serve.err" &
    server_pid=$!
    for _ in $(seq 1 240); do
        addr=$(sed -n 's/.*hbase rpc on \([^ ]*\).*/\1/p' "$work/serve.out" | head -1)
        [ -n "$addr" ] && break
        kill -0 "$server_pid" 2>/dev/null || { cat "$work/serve.err" >&2; exit 1; }
        sleep 0.25
    done
    [ -n "$addr" ] || { echo "cairn serve printed no hbase rpc address" >&2; exit 1; }
fi

# The client's registry: ZooKeeper when --zk is given, else the RPC bootstrap registry.
mkdir -p "$work/conf"
if [ -n "$zk" ]; then
    registry=(--zk "$zk")
    site="<property><name>hbase.zookeeper.quorum</name><value>${zk%:*}</value></property>
  <property><name>hbase.zookeeper.property.clientPort</name><value>${zk##*:}</value></property>"
else
    registry=(--bootstrap "$addr")
    site="<property><name>hbase.client.registry.impl</name><value>org.apache.hadoop.hbase.client.RpcConnectionRegistry</value></property>
  <property><name>hbase.client.bootstrap.servers</name><value>$addr</value></property>"
fi
cat >"$work/conf/hbase-site.xml" <<EOF
<configuration>
  $site
</configuration>
EOF
# PE reports through its logger at INFO; everything else at WARN.
cat >"$work/conf/log4j.properties" <<'EOF'
log4j.rootLogger=WARN,console
log4j.logger.org.apache.hadoop.hbase.PerformanceEvaluation=INFO
log4j.appender.console=org.apache.log4j.ConsoleAppender
log4j.appender.console.target=System.err
log4j.appender.console.layout=org.apache.log4j.PatternLayout
log4j.appender.console.layout.ConversionPattern=%d{ISO8601} %-5p [%t] %c{2}: %m%n
EOF

jvm=(-Xmx2g -Dorg.apache.hbase.thirdparty.io.netty.tryReflectionSetAccessible=true
    --add-modules jdk.unsupported --add-opens java.base/java.nio=ALL-UNNAMED
    --add-opens java.base/sun.nio.ch=ALL-UNNAMED --add-opens java.base/java.lang=ALL-UNNAMED
    --add-opens java.base/jdk.internal.ref=ALL-UNNAMED --add-opens java.base/java.lang.reflect=ALL-UNNAMED
    --add-opens java.base/java.util=ALL-UNNAMED --add-opens java.base/java.util.concurrent=ALL-UNNAMED
    --add-exports java.base/jdk.internal.misc=ALL-UNNAMED --add-exports java.base/sun.net.dns=ALL-UNNAMED
    --add-exports java.base/sun.net.util=ALL-UNNAMED --add-exports java.security.jgss/sun.security.krb5=ALL-UNNAMED)
cp="$work/conf:$jar:$root/interop/hbase/target/lib/*"

count_rows() { # TABLE [FAMILY:QUALIFIER]
    java "${jvm[@]}" -cp "$cp" dev.cairn.interop.CountRows "${registry[@]}" "$@" 2>>"$work/count.err"
}

fails=0
n=0
lines=()
row() { # cells...
    local out="|" cell
    for cell in "$@"; do out+=" $cell |"; done
    lines+=("$out")
    printf '%s\n' "$out"
}
row command clients options "rows expected" "rows seen" ms "PE rows/s" result
row --- --- --- --- --- --- --- ---

# pe KIND TABLE CLIENTS ROWS COMMAND [OPTIONS...]
#   KIND: write (table must hold ROWS x CLIENTS rows after), read (only the Finished lines),
#   cas (increment/append/checkAndPut: the column check above).
pe() {
    local kind=$1 table=$2 clients=$3 prows=$4 cmd=$5
    shift 5
    local opts=("$@")
    n=$((n + 1))
    local log="$work/$n-$cmd.log"
    local status=0
    java "${jvm[@]}" -cp "$cp" org.apache.hadoop.hbase.PerformanceEvaluation --nomapred \
        --table="$table" --rows="$prows" "${opts[@]}" "$cmd" "$clients" >"$log" 2>&1 || status=$?
    local expected=$((prows * clients))
    local finished ms tps seen ok=OK why=
    finished=$(sed -n 's/.*Finished class .* for \([0-9]*\) rows.*/\1/p' "$log" | awk '{s += $1} END {print s + 0}')
    ms=$(sed -n 's/.*duration \]\tMin: .*Max: \([0-9]*\)ms.*/\1/p' "$log" | tail -1)
    tps=$(sed -n 's/.*\[ Avg TPS\/QPS\]\t\([0-9.]*\).*/\1/p' "$log" | tail -1)
    seen="finished $finished"
    if [ "$status" != 0 ]; then ok=FAIL; why=" (exit $status)"; fi
    if [ "$finished" != "$expected" ]; then ok=FAIL; fi
    case "$kind" in
        write)
            local count
            count=$(count_rows "$table" || echo "error")
            seen="$seen, table $count"
            [ "$count" = "$expected" ] || ok=FAIL
            ;;
        cas)
            local qualifier got want
            case "$cmd" in
                increment) qualifier=IncrementTest; want="$prows $((prows * 8)) $((prows * clients))" ;;
                append) qualifier=AppendTest; want="$prows $((prows * 26 * clients)) 0" ;;
                checkAndPut) qualifier=CheckAndPutTest; want="$prows $((prows * 26)) 0" ;;
            esac
            got=$(count_rows "$table" "info0:$qualifier" || echo "error")
            seen="$seen, column rows/bytes/sum $got"
            expected="$expected (column $want)"
            [ "$got" = "$want" ] || ok=FAIL
            ;;
    esac
    if [ "$ok" = FAIL ]; then
        fails=$((fails + 1))
        why="$why; log $log"
        KEEP=1
    fi
    row "$cmd" "$clients" "${opts[*]:-}" "$expected" "$seen" "${ms:-?}" "${tps:-?}" "$ok$why"
}

r=$rows
small=$((rows / 50 > 0 ? rows / 50 : 1))
# Writes: a presplit table, then the same keys again in other ways (so the count stays 2r).
pe write PE_T 2 "$r" sequentialWrite --presplit=4
pe write PE_T 2 "$r" randomWrite
pe write PE_T 2 "$r" sequentialWrite --autoFlush=true
pe write PE_T 2 "$r" sequentialWrite --valueSize=100
pe write PE_T 2 "$r" sequentialWrite
# Reads of that table.
pe read PE_T 2 "$r" randomRead
pe read PE_T 2 "$r" randomRead --multiGet=100
pe read PE_T 2 "$r" scan
pe read PE_T 2 "$r" scan --filterAll
for range in 10 100 1000 10000; do
    # A scanRangeN call reads up to N rows: fewer calls for the longer ranges.
    calls=$((range >= 1000 ? small : r / 10))
    pe read PE_T 2 "$calls" "scanRange$range"
    pe read PE_T 2 "$calls" "scanRange$range" --filterAll
done
# Every filterScan call scans the whole table.
pe read PE_T 1 "$small" filterScan
pe read PE_T 1 "$small" filterScan --filterAll
# Other client counts, on tables of their own.
pe write PE_C1 1 "$r" sequentialWrite
pe read PE_C1 1 "$r" randomRead
pe write PE_C4 4 "$r" sequentialWrite --presplit=2
pe read PE_C4 4 "$r" randomRead
pe read PE_C4 4 "$small" scanRange100
# Read-modify-write commands: every client works on the same rows 0..r-1.
pe cas PE_CAS 2 "$r" increment
pe cas PE_CAS 2 "$r" append
pe cas PE_CAS 2 "$r" checkAndPut

if [ -n "$md" ]; then
    {
        echo "# HBase 2.6.1 PerformanceEvaluation --nomapred against cairn"
        echo
        server="a server at $addr"
        if [ -n "$server_pid" ]; then
            server="\`${bin#"$root"/} serve\` ($(git rev-parse --short HEAD 2>/dev/null || echo '?')$(case $bin in *debug*) echo ', debug build' ;; esac))"
        fi
        echo "\`bench/pe-commands.sh --rows $rows\`, $(date -u '+%Y-%m-%d %H:%M UTC'), server: $server, client registry: $(if [ -n "$zk" ]; then echo "ZooKeeper $zk"; else echo "RPC bootstrap"; fi)."
        echo "rows expected = --rows x clients; \"finished\" = the sum of PE's \"Finished class ... for N rows\""
        echo "lines; \"table\" = a FirstKeyOnlyFilter full scan through HBase's client (CountRows); ms = PE's"
        echo "slowest client; PE rows/s = PE's \"[ Avg TPS/QPS]\" line. Shared 2-core machine: indicative only."
        echo
        printf '%s\n' "${lines[@]}"
    } >"$md"
fi
if [ "$fails" -gt 0 ]; then
    echo "$fails command(s) FAILED" >&2
    exit 1
fi
echo "all $n commands OK"
