#!/usr/bin/env bash
# Values of any length on the CPU side (issue 53, item 5), on the GPU machine's cores, one call, from
# the bundle of cuda/make-device-bundle.sh:
#   YCSB=1      bench ycsb, CPU backend, --value-lengths mixed (16 B-4 KiB) against values of 128 bytes
#               on a format 3 pool and on a format 2 pool, chm and lmdb beside each (THREADS, KEYS, BATCH)
#   OLD=DIR     with YCSB=1: the mixed run again (YROUNDS times, alternating) on the bundle with DIR's
#               gphash jars in place of its own (an earlier build: a baseline from the same call)
#   JOURNAL=1   JournalBench --backend cpu --pool-format 2, then 3 (records with lengths), pool on
#               /dev/shm, journal on the root disk (JKEYS keys; parts JPARTS)
#   AROUNDS=N   bench ycsb's load and A, values of 128 bytes, format 3 then format 2, N times (the heap's
#               takes under updates from THREADS threads)
#   PROFILE="3 2" a flight recording of bench ycsb's load and A, values of 128 bytes, on a pool of each format
#               (bench-ycsb/jfr-summary.sh of each under $OUT)
#   DLRM=1      the DLRM trace with a row width per table (--value-lengths mixed) and with 128-byte rows,
#               each replayed on the CPU backend against DLRM_BASELINES (default chm: LMDB takes minutes)
#   GCRASH=N    crash rounds of the GPU engine with a journal (power cuts), format 3 pool (N rounds)
#   SPACE=N     with OLD=DIR: ValueLengthsBench (values of 8 B-4 KiB, THREADS threads) of 400,000 items,
#               10 rounds, and of 4M items, 3 rounds: the heap held over the live bytes, on the earlier
#               build and on this one in turn, N rounds
#   HEAP=N      with OLD=DIR: HeapBench (the allocators alone, 1-16 threads) and bench ycsb's load and A
#               on format 3, on the earlier build and on this one in turn, N rounds
# Logs under $OUT; summary.txt's last lines are the tables.
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
bash cuda/device-unpack.sh || exit 1
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader | tee "$OUT/gpu.txt"
THREADS="${THREADS:-16}"
KEYS="${KEYS:-4194304}"
BATCH="${BATCH:-4096}"
ycsb() {  # tag, JVM options, bench options... (BUNDLE: the bundle to run, default /tmp/bundle)
    local tag=$1 jo=$2
    shift 2
    local t0=$(date +%s)
    JAVA_OPTS="-Xmx48g --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED $jo" timeout ${YCSBWATCH:-240} ${BUNDLE:-/tmp/bundle}/bin/run org.gphash.bench.YcsbBench --threads "$THREADS" \
        --keys "$KEYS" --ops "${OPS:-$KEYS}" --batch "$BATCH" --workloads "${WL:-load,c,a}" --no-progress "$@" > "$OUT/ycsb-$tag.log" 2>&1
    echo "== ycsb $tag rc=$? $(( $(date +%s) - t0 )) s: $*" >> "$OUT/summary.txt"
    grep -E '^(gphash-cpu|chm|lmdb) ' "$OUT/ycsb-$tag.log" >> "$OUT/summary.txt"
}
if [[ -n "${YCSB:-}" ]]; then
    ycsb mixed "" --value-lengths mixed --baselines chm,lmdb
    ycsb fixed3 "-Dgphash.bench.poolFormat=3" --baselines chm,lmdb
    ycsb fixed2 "" --baselines chm,lmdb
    for ((r = 1; r <= ${YROUNDS:-1}; r++)); do
        if [[ -n "${OLD:-}" ]]; then
            BUNDLE=/tmp/bundle-old ycsb mixed-old-r$r "" --value-lengths mixed --baselines chm
        fi
        ycsb mixed-r$r "" --value-lengths mixed --baselines chm
    done
fi
for ((r = 1; r <= ${AROUNDS:-0}; r++)); do
    for f in 3 2; do
        WL=load,a ycsb a-f$f-r$r "-Dgphash.bench.poolFormat=$f" --baselines none
    done
done
for f in ${PROFILE:-}; do
    WL=load,a ycsb jfr-f$f "-Dgphash.bench.poolFormat=$f -XX:StartFlightRecording=delay=${PROFILE_DELAY:-0}s,filename=$OUT/a-f$f.jfr,settings=profile,jdk.ExecutionSample#period=2ms,jdk.JavaMonitorEnter#threshold=1ms,jdk.ThreadPark#threshold=1ms" \
        --baselines none --warmup 0
    bash bench-ycsb/jfr-summary.sh "$OUT/a-f$f.jfr" > "$OUT/a-f$f-profile.txt" 2>&1
    rm -f "$OUT/a-f$f.jfr"
done
if [[ -n "${JOURNAL:-}" ]]; then
    disk=/var/tmp/gphash-lengths
    for f in 2 3; do
        rm -rf "$disk"; mkdir -p "$disk"; chmod 700 "$disk"
        t0=$(date +%s)
        JAVA_OPTS="-Xmx48g --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED" timeout ${JWATCH:-200} /tmp/bundle/bin/run org.gphash.bench.journal.JournalBench --backend cpu \
            --pool-format $f --keys "${JKEYS:-4194304}" --parts "${JPARTS:-batches,singles,rebuild}" --seconds 2 \
            --replay-bytes 268435456 --pool-dir /dev/shm --disk-dir "$disk/bench" > "$OUT/journal-f$f.log" 2>&1
        echo "== JournalBench cpu format $f rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/summary.txt"
        grep '^|' "$OUT/journal-f$f.log" >> "$OUT/summary.txt"
    done
fi
if [[ -n "${DLRM:-}" ]]; then
    T=/dev/shm/dlrm-lengths; mkdir -p $T
    for v in mixed fixed; do
        t0=$(date +%s)
        timeout 150 /tmp/bundle/bin/run org.gphash.bench.TraceMain dlrm --updates --value-lengths $v \
            --samples "${DLRM_SAMPLES:-1000000}" --out $T/$v.trace > "$OUT/trace-$v.log" 2>&1
        JAVA_OPTS="-Xmx48g --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED" \
            timeout 200 /tmp/bundle/bin/run org.gphash.bench.Replay $T/$v.trace --backend cpu --baselines "${DLRM_BASELINES:-chm}" \
            --no-progress > "$OUT/replay-$v.log" 2>&1
        echo "== dlrm $v rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/summary.txt"
        grep -E '^(gphash|chm|lmdb|  dlrm)|values of up to|-byte values' "$OUT/replay-$v.log" >> "$OUT/summary.txt"
        rm -f $T/$v.trace
    done
fi
for ((r = 1; r <= ${SPACE:-0}; r++)); do
    for b in old new; do
        bundle=/tmp/bundle; [[ $b == old ]] && bundle=/tmp/bundle-old
        for size in "400000 10" "4000000 3"; do
            t0=$(date +%s)
            JAVA_OPTS="-Xmx48g" timeout 200 $bundle/bin/run org.gphash.bench.ValueLengthsBench $size "$THREADS" mixed \
                > "$OUT/space-$b-${size%% *}-r$r.log" 2>&1
            echo "== ValueLengthsBench $size $b r$r rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/summary.txt"
            grep '^| format' "$OUT/space-$b-${size%% *}-r$r.log" >> "$OUT/summary.txt"
        done
    done
done
for ((r = 1; r <= ${HEAP:-0}; r++)); do
    for b in old new; do
        bundle=/tmp/bundle; [[ $b == old ]] && bundle=/tmp/bundle-old
        t0=$(date +%s)
        JAVA_OPTS="-Xmx48g" timeout 200 $bundle/bin/run org.gphash.bench.HeapBench --threads "$THREADS" --seconds 2 \
            > "$OUT/heap-$b-r$r.log" 2>&1
        echo "== HeapBench $b r$r rc=$? $(( $(date +%s) - t0 )) s" >> "$OUT/summary.txt"
        grep '^| [0-9]' "$OUT/heap-$b-r$r.log" >> "$OUT/summary.txt"
        BUNDLE=$bundle WL=load,a ycsb a3-$b-r$r "-Dgphash.bench.poolFormat=3" --baselines none
    done
done
if [[ -n "${GCRASH:-}" ]]; then
    disk=/var/tmp/gphash-gcrash
    rm -rf "$disk"; mkdir -p "$disk"; chmod 700 "$disk"
    JAVA_OPTS="-Xmx4g" timeout 240 /tmp/bundle/bin/run org.gphash.crashtest.CrashTest --backend gpu --journal "$disk/j" \
        --power-fail --rounds "$GCRASH" --batch 64 --threads 2 --keys 6000 --seed 5357 --pool-format 3 \
        /dev/shm/gcrash.pool > "$OUT/gcrash.log" 2>&1
    echo "== crashtest gpu journal power-fail format 3 rc=$?" >> "$OUT/summary.txt"
    tail -4 "$OUT/gcrash.log" >> "$OUT/summary.txt"
fi
cat "$OUT/summary.txt"
