// Pebble (github.com/cockroachdb/pebble/v2, CockroachDB's Go LSM) as a peer in cairn's
// benchmark report (bench/report.sh), with the workloads, keys, values and output lines of
// bench/rocksdb-peer:
//
//	pebble-peer pe DIR ROWS VALUE_SIZE GETS SCANS BATCH RANGE WORKLOADS
//	    loads ROWS rows (HBase PE's keys: the row number zero-padded to 26 digits; values of
//	    VALUE_SIZE bytes, runs of 8 equal random capitals), flushes, compacts, reads every row
//	    once so the block cache (4 GiB) holds every block, then runs each workload of the
//	    comma-separated WORKLOADS (get:T, multiget:T, scan:T; T client goroutines): GETS random
//	    point lookups; GETS / BATCH multi-gets of BATCH random rows (Pebble has no multi-get:
//	    BATCH Gets in a row); SCANS iterators over RANGE rows from a random row, touching every
//	    value and returning nothing (PE's scanRange10000 --filterAll). Prints one
//	    "bench-result key=value ..." line per workload.
//	pebble-peer fillseq DIR ROWS VALUE_SIZE THREADS SYNC
//	    sequential puts with the WAL on, one Set per row, THREADS goroutines each writing a
//	    contiguous range; SYNC true = pebble.Sync (fsync before returning), false =
//	    pebble.NoSync (written to the OS). Prints one "puts-result key=value ..." line.
//
// Options: Pebble's defaults (4 KiB blocks, CRC32C block checksums) except the cache size, no
// compression and a 10-bit Bloom filter on every level.
package main

import (
	"context"
	"fmt"
	"os"
	"sort"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"time"

	pebble "github.com/cockroachdb/pebble/v2"
	"github.com/cockroachdb/pebble/v2/bloom"
	"github.com/cockroachdb/pebble/v2/sstable"
)

// peRow writes i zero-padded to 26 digits (HBase PE's format(long)).
func peRow(i uint64, row []byte) {
	for j := len(row) - 1; j >= 0; j-- {
		row[j] = byte('0' + i%10)
		i /= 10
	}
}

func xorshift(x *uint64) uint64 {
	*x ^= *x << 13
	*x ^= *x >> 7
	*x ^= *x << 17
	return *x
}

// peValue fills value with runs of 8 equal random capitals (HBase PE's generateData).
func peValue(x *uint64, value []byte) {
	for j := 0; j < len(value); j += 8 {
		c := byte('A' + xorshift(x)%26)
		for k := j; k < j+8 && k < len(value); k++ {
			value[k] = c
		}
	}
}

func cpu() (float64, float64) {
	var r syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &r); err != nil {
		panic(err)
	}
	t := func(tv syscall.Timeval) float64 { return float64(tv.Sec) + float64(tv.Usec)/1e6 }
	return t(r.Utime), t(r.Stime)
}

func must(err error) {
	if err != nil {
		panic(err)
	}
}

func atoi(s string) uint64 {
	n, err := strconv.ParseUint(s, 10, 64)
	must(err)
	return n
}

// quantile of sorted nanosecond latencies, in microseconds.
func quantile(ns []int64, q float64) float64 {
	if len(ns) == 0 {
		return 0
	}
	i := int(q*float64(len(ns))+0.5) - 1
	if i < 0 {
		i = 0
	}
	if i >= len(ns) {
		i = len(ns) - 1
	}
	return float64(ns[i]) / 1000
}

func open(dir string, cacheBytes int64) *pebble.DB {
	cache := pebble.NewCache(cacheBytes)
	opts := &pebble.Options{Cache: cache}
	for i := range opts.Levels {
		opts.Levels[i].FilterPolicy = bloom.FilterPolicy(10)
		// Uncompressed, as cairn's and HBase's files (PE's default --compress=NONE).
		opts.Levels[i].Compression = func() *sstable.CompressionProfile { return sstable.NoCompression }
	}
	db, err := pebble.Open(dir, opts)
	must(err)
	cache.Unref()
	return db
}

func pe(a []string) {
	dir := a[0]
	rows, valueSize, gets, scans, batch, rng := atoi(a[1]), atoi(a[2]), atoi(a[3]), atoi(a[4]), atoi(a[5]), atoi(a[6])
	db := open(dir, 4<<30)
	defer db.Close()
	row := make([]byte, 26)
	value := make([]byte, valueSize)
	x := uint64(0x9E3779B97F4A7C15)
	b := db.NewBatch()
	for i := uint64(0); i < rows; i++ {
		peRow(i, row)
		peValue(&x, value)
		must(b.Set(row, value, nil))
		if b.Len() > 4<<20 {
			must(b.Commit(pebble.NoSync))
			b = db.NewBatch()
		}
	}
	must(b.Commit(pebble.NoSync))
	must(db.Flush())
	must(db.Compact(context.Background(), []byte{0}, []byte{0xff}, true))
	for i := uint64(0); i < rows; i++ {
		peRow(i, row)
		v, closer, err := db.Get(row)
		must(err)
		_ = v[0]
		must(closer.Close())
	}
	for _, w := range strings.Split(a[7], ",") {
		kind, t, ok := strings.Cut(w, ":")
		if !ok {
			panic("WORKLOAD is kind:threads")
		}
		threads := atoi(t)
		var ops uint64
		switch kind {
		case "get":
			ops = gets
		case "multiget":
			ops = gets / batch
		case "scan":
			ops = scans
		default:
			panic("unknown workload " + kind)
		}
		lat := make([][]int64, threads)
		read := make([]uint64, threads)
		var start, done sync.WaitGroup
		start.Add(1)
		for c := uint64(0); c < threads; c++ {
			n := ops / threads
			if c < ops%threads {
				n++
			}
			done.Add(1)
			go func(c, n uint64) {
				defer done.Done()
				x := uint64(0x2545F4914F6CDD1D) ^ ((c + 1) * 0x9E3779B9)
				l := make([]int64, 0, n)
				key := make([]byte, 26)
				hi := make([]byte, 26)
				var sum, r uint64
				start.Wait()
				for i := uint64(0); i < n; i++ {
					t0 := time.Now()
					switch kind {
					case "get", "multiget":
						k := uint64(1)
						if kind == "multiget" {
							k = batch
						}
						for j := uint64(0); j < k; j++ {
							peRow(xorshift(&x)%rows, key)
							v, closer, err := db.Get(key)
							must(err)
							sum += uint64(v[0])
							must(closer.Close())
							r++
						}
					default:
						first := xorshift(&x) % rows
						peRow(first, key)
						peRow(first+rng, hi)
						it, err := db.NewIter(&pebble.IterOptions{UpperBound: hi})
						must(err)
						for ok := it.SeekGE(key); ok; ok = it.Next() {
							sum += uint64(it.Value()[0])
							r++
						}
						must(it.Close())
					}
					l = append(l, time.Since(t0).Nanoseconds())
				}
				if sum == 42 {
					fmt.Fprintln(os.Stderr, "")
				}
				lat[c] = l
				read[c] = r
			}(c, n)
		}
		u0, s0 := cpu()
		t0 := time.Now()
		start.Done()
		done.Wait()
		wall := time.Since(t0).Seconds()
		u1, s1 := cpu()
		var all []int64
		var rowsRead uint64
		for c := range lat {
			all = append(all, lat[c]...)
			rowsRead += read[c]
		}
		sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
		var mean float64
		for _, v := range all {
			mean += float64(v)
		}
		if len(all) > 0 {
			mean /= float64(len(all))
		}
		fmt.Printf("bench-result engine=pebble workload=%s threads=%d ops=%d rows=%d wall_s=%.4f user_s=%.4f sys_s=%.4f mean_us=%.2f p50_us=%.2f p75_us=%.2f p95_us=%.2f p99_us=%.2f p999_us=%.2f max_us=%.2f\n",
			kind, threads, ops, rowsRead, wall, u1-u0, s1-s0, mean/1000, quantile(all, 0.5), quantile(all, 0.75),
			quantile(all, 0.95), quantile(all, 0.99), quantile(all, 0.999), quantile(all, 1))
	}
}

func fillseq(a []string) {
	dir := a[0]
	rows, valueSize, threads := atoi(a[1]), atoi(a[2]), atoi(a[3])
	syncWAL := a[4] == "true"
	wo := pebble.NoSync
	if syncWAL {
		wo = pebble.Sync
	}
	db := open(dir, 8<<20)
	defer db.Close()
	lat := make([][]int64, threads)
	var start, done sync.WaitGroup
	start.Add(1)
	per := rows / threads
	for t := uint64(0); t < threads; t++ {
		first, last := t*per, (t+1)*per
		if t+1 == threads {
			last = rows
		}
		done.Add(1)
		go func(t, first, last uint64) {
			defer done.Done()
			row := make([]byte, 26)
			value := make([]byte, valueSize)
			x := uint64(0x9E3779B97F4A7C15) ^ (t + 1)
			l := make([]int64, 0, last-first)
			start.Wait()
			for i := first; i < last; i++ {
				peRow(i, row)
				peValue(&x, value)
				t0 := time.Now()
				must(db.Set(row, value, wo))
				l = append(l, time.Since(t0).Nanoseconds())
			}
			lat[t] = l
		}(t, first, last)
	}
	u0, s0 := cpu()
	t0 := time.Now()
	start.Done()
	done.Wait()
	wall := time.Since(t0).Seconds()
	u1, s1 := cpu()
	var all []int64
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	var mean float64
	for _, v := range all {
		mean += float64(v)
	}
	mean /= float64(len(all))
	fmt.Printf("puts-result engine=pebble wal_sync=%t threads=%d rows=%d value_size=%d wall_s=%.4f cpu_s=%.4f mean_us=%.2f p50_us=%.2f p90_us=%.2f p99_us=%.2f p999_us=%.2f max_us=%.2f\n",
		syncWAL, threads, rows, valueSize, wall, (u1-u0)+(s1-s0), mean/1000, quantile(all, 0.5), quantile(all, 0.9),
		quantile(all, 0.99), quantile(all, 0.999), quantile(all, 1))
}

func main() {
	if len(os.Args) < 2 {
		fmt.Fprintln(os.Stderr, "usage: pebble-peer pe|fillseq ...")
		os.Exit(2)
	}
	switch os.Args[1] {
	case "pe":
		pe(os.Args[2:])
	case "fillseq":
		fillseq(os.Args[2:])
	default:
		fmt.Fprintln(os.Stderr, "unknown mode "+os.Args[1])
		os.Exit(2)
	}
}
