#!/usr/bin/env bash
# YCSB's own client (site.ycsb.Client through org.gphash.bench.ycsb.GPHashDB) on the GPU machine:
# the GPU engine with and without coalescing, and the CPU engine, on one pool, same run.
# Run from the repository root with the device bundle (cuda/make-device-bundle.sh) at .device-bundle:
#   bench-ycsb/device-ycsb-coalescing.sh        (REC=records, default 1M; logs and a table under $OUT)
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
bash cuda/device-unpack.sh || exit 1
REC="${REC:-1000000}"
POOL=/dev/shm/ycsb-coalescing.pool
rm -f "$POOL"
phase() {  # tag phase workload threads ops backend coalescing [host cache MiB] [adaptive] [JVM options] [spin us]
    local tag=$1 ph=$2 wl=$3 th=$4 ops=$5 be=$6 co=$7 hc=${8:-0} ad=${9:-false} jo=${10:-} sp=${11:-50}
    JAVA_OPTS="-Xmx32g $jo" timeout 100 ${BUNDLE:-/tmp/bundle}/bin/run org.gphash.bench.ycsb.YcsbPhases "$ph" \
        -P "bench-ycsb/workloads/workload$wl" -threads "$th" -p recordcount="$REC" -p operationcount="$ops" \
        -p gphash.backend="$be" -p gphash.coalescing="$co" -p gphash.hostcache.mb="$hc" -p gphash.adaptive="$ad" -p gphash.spin.us="$sp" -p gphash.path="$POOL" \
        -p hdrhistogram.percentiles=50,95,99 \
        > "$OUT/$tag.log" 2>&1
    local tput rlat r50 r99 mb hr ao
    tput=$(grep -m1 '^\[OVERALL\], Throughput' "$OUT/$tag.log" | awk -F', ' '{printf "%.0f", $3}')
    rlat=$(grep -m1 -E '^\[(READ|INSERT)\], AverageLatency' "$OUT/$tag.log" | awk -F', ' '{printf "%.1f", $3}')
    r50=$(grep -m1 -E '^\[(READ|INSERT)\], 50thPercentileLatency' "$OUT/$tag.log" | awk -F', ' '{print $3}')
    r99=$(grep -m1 -E '^\[(READ|INSERT)\], 99thPercentileLatency' "$OUT/$tag.log" | awk -F', ' '{print $3}')
    mb=$(grep -m1 'gphash: coalescer' "$OUT/$tag.log" | sed 's/.*(mean \([0-9.]*\)).*/\1/')
    hr=$(grep -m1 'gphash: coalescer' "$OUT/$tag.log" | sed 's/.*hit rate \([0-9.]*\).*/\1/')
    ao=$(grep -m1 'gphash: coalescer' "$OUT/$tag.log" | sed -n 's/.*, \([0-9]*\) gets run at once.*/\1/p')
    printf '| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n' "$tag" "$wl" "$be" "$co" "$hc" "$ad" "$th" "${tput:-?}" \
        "${rlat:-?}" "${r50:-?}" "${r99:-?}" "${mb:--}" "${hr:--}" "${ao:--}" | tee -a "${TABLE:-$OUT/table.md}" >> "$OUT/table.md"
}
# For each workload in $1 and thread count in $2: the GPU engine coalesced with the host cache,
# with JVM options $4 (tag $3) and $6 (tag $5), then the CPU engine; $7 true runs the first adaptive.
against_cpu() {
    local wl th
    for wl in $1; do
        for th in $2; do
            phase $wl-gpu-$th-$3 run $wl $th 2000000 gpu on "$HC" "${7:-false}" "$4"
            phase $wl-gpu-$th-$5 run $wl $th 2000000 gpu on "$HC" false "$6"
            phase $wl-cpu-$th run $wl $th 2000000 cpu off
        done
    done
}
echo '| run | workload | backend | coalescing | host cache MiB | adaptive | threads | ops/s | mean latency (us) | p50 (us) | p99 (us) | mean batch | host hit rate | gets run at once |' > "$OUT/table.md"
echo '| --- | --- | --- | --- | ---: | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |' >> "$OUT/table.md"
HC="${HC:-256}"
phase load-gpu-on-256 load c 256 1 gpu on
if [[ "${PLAN:-full}" == targets ]]; then
    # The GPU engine (coalesced, host cache) against the CPU engine, same pool and run: C and A at 16
    # threads, A, B and C at 256 (issue 26's YCSB targets). JO: JVM options of the GPU engine's phases
    # (e.g. -Dgphash.gpuTuning=smallWritesMax=32).
    for wl in c a; do
        phase $wl-gpu-16 run $wl 16 2000000 gpu on "$HC" false "${JO:-}"
        phase $wl-cpu-16 run $wl 16 2000000 cpu off
    done
    for wl in a b c; do
        phase $wl-gpu-256 run $wl 256 4000000 gpu on "$HC" false "${JO:-}"
        phase $wl-cpu-256 run $wl 256 4000000 cpu off
    done
    rm -f "$POOL"
    cat "$OUT/table.md"
    exit 0
fi
if [[ "${PLAN:-full}" == profile57 ]]; then
    # Issue 57's open question: where a single call on the GPU backend (host route) spends the time the
    # CPU backend does not. A flight recording of workload PWL (default a) from PTH client threads
    # (default 16; 256 for the share the GPU backend loses there without its open), direct, then the CPU
    # backend's, each summarised (bench-ycsb/jfr-summary.sh) with the GPU backend's host counters, to
    # $OUT/profile-*.txt.
    # Samples every millisecond (the profile's 10-20 ms gave under 200 samples a run at 256 threads),
    # native code's samples as often, and every monitor wait and park from PWAIT (default 1 ms).
    wl=${PWL:-a}; th=${PTH:-16}
    jfr=${PJFR:-"settings=profile,jdk.ExecutionSample#period=1ms,jdk.NativeMethodSample#period=1ms,jdk.JavaMonitorEnter#threshold=${PWAIT:-1ms},jdk.ThreadPark#threshold=${PWAIT:-1ms}"}
    # PBE picks the backends (default both); PKEEP=1 keeps each recording as $OUT/$wl-$be.jfr.
    for be in ${PBE:-gpu cpu}; do
        phase $wl-$be-$th-jfr run $wl $th 2000000 $be off 0 false "-XX:StartFlightRecording=filename=$OUT/$wl-$be.jfr,$jfr"
        { grep -E 'gphash: |RunTime' "$OUT/$wl-$be-$th-jfr.log"; bash bench-ycsb/jfr-summary.sh "$OUT/$wl-$be.jfr"; } > "$OUT/profile-$be.txt" 2>&1
        [[ "${PKEEP:-0}" == 1 ]] || rm -f "$OUT/$wl-$be.jfr"
    done
    rm -f "$POOL"
    cat "$OUT/table.md" "$OUT"/profile-*.txt
    exit 0
fi
if [[ "${PLAN:-full}" == standard53 ]]; then
    # Issue 53: YCSB's standard workloads A and C, unmodified (ten fields of 100 bytes, about 1 KB a
    # record), through YCSB's client with every read checked (dataintegrity=true): the GPU backend and
    # the CPU backend on format 2 pools (1,104-byte values, records padded), the CPU backend on a format
    # 3 pool (records at their own length). SREC records, SOPS operations a phase, STH client threads;
    # SRUNS picks the runs ("backend format" pairs, comma-separated; "gpu 3": records padded, format 3).
    IFS=',' read -ra runs <<< "${SRUNS:-gpu 2,cpu 2,cpu 3}"
    for run in "${runs[@]}"; do
        set -- $run
        P=/dev/shm/ycsb-standard-$1-$2.pool; rm -f "$P"
        for ph in "load a" "run a" "run c"; do
            set -- $run $ph
            tag=standard-$1-f$2-$3-$4
            JAVA_OPTS="-Xmx32g" timeout 200 /tmp/bundle/bin/run org.gphash.bench.ycsb.YcsbPhases $3 \
                -P bench-ycsb/workloads/standard/workload$4 -threads "${STH:-16}" -p recordcount="${SREC:-1000000}" \
                -p operationcount="${SOPS:-2000000}" -p dataintegrity=true -p gphash.backend=$1 -p gphash.poolformat=$2 \
                -p gphash.path="$P" > "$OUT/$tag.log" 2>&1
            printf '| %s | %s | %s | %s | %s | %s |\n' "$1" "$2" "$3 $4" \
                "$(grep -m1 '^\[OVERALL\], Throughput' "$OUT/$tag.log" | awk -F', ' '{printf "%.0f", $3}')" \
                "$(grep -m1 '^\[VERIFY\], Return=OK' "$OUT/$tag.log" | awk -F', ' '{print $3}')" \
                "$(grep -cE 'Return=(ERROR|UNEXPECTED_STATE|BAD_REQUEST|NOT_FOUND)' "$OUT/$tag.log")" >> "$OUT/standard.md"
        done
        ls -l "$P" >> "$OUT/standard.md"; rm -f "$P"
    done
    cat "$OUT/standard.md"
    exit 0
fi
if [[ "${PLAN:-full}" == targets57 ]]; then
    # Issue 57's targets: the GPU backend (direct single calls, the default) against the CPU backend,
    # A, B, C and F at 16 and 256 client threads, OPS operations a phase; each phase's open and run
    # time and the GPU backend's host counters to $OUT/opens.txt (YCSB counts the open in the run).
    # THREADS and WLS pick fewer rows; JO adds JVM options to every phase (a logging configuration
    # that shows the engine's DEBUG lines prints each heap growth's time to opens.txt).
    for th in ${THREADS:-16 256}; do
        for wl in ${WLS:-a b c f}; do
            for be in gpu cpu; do
                phase $wl-$be-$th run $wl $th "${OPS:-2000000}" $be off 0 false "${JO:-}"
                { echo "== $wl-$be-$th"; grep -E 'gphash: |RunTime' "$OUT/$wl-$be-$th.log"; } >> "$OUT/opens.txt"
            done
        done
    done
    rm -f "$POOL"
    cat "$OUT/table.md"
    exit 0
fi
if [[ "${PLAN:-full}" == hostwrites-short ]]; then
    # Issue 57, short: direct and coalesced GPU backend against the CPU backend, A and C at 16 client
    # threads, A and B at 256.
    for run in "a 16" "c 16" "a 256" "b 256"; do
        set -- $run
        phase $1-gpu-$2-direct run $1 $2 1000000 gpu off 0
        phase $1-gpu-$2-coalesced run $1 $2 1000000 gpu on "$HC"
        phase $1-cpu-$2 run $1 $2 1000000 cpu off
    done
    rm -f "$POOL"
    exit 0
fi
if [[ "${PLAN:-full}" == hostwrites ]]; then
    # Issue 57: the GPU backend with single calls run on the host (direct: no coalescer), the same with
    # the coalescer and host cache, every write on the GPU as before (hostBatchesMax=0, coalesced), and
    # the CPU backend; workloads A, B, C and F at 16 and 256 client threads, one pool, one run.
    GPUONLY=-Dgphash.gpuTuning=hostBatchesMax=0
    for th in 16 256; do
        for wl in a b c f; do
            phase $wl-gpu-$th-direct run $wl $th 2000000 gpu off 0
            phase $wl-gpu-$th-coalesced run $wl $th 2000000 gpu on "$HC"
            phase $wl-gpu-$th-gpuwrites run $wl $th 300000 gpu on "$HC" false $GPUONLY
            phase $wl-cpu-$th run $wl $th 2000000 cpu off
        done
    done
    rm -f "$POOL"
    cat "$OUT/table.md"
    exit 0
fi
if [[ "${PLAN:-full}" == small ]]; then
    # Small batches of gets in one launch (SmallReads) against the pipeline for every batch
    # (-Dgphash.gpuTuning=smallReadsMax=0), spinning waits (50 us, the default) against none, GPU engine
    # coalesced, and the CPU engine; 1 thread shows a get's latency.
    NOSMALL=-Dgphash.gpuTuning=smallReadsMax=0
    phase c-gpu-1-small-spin run c 1 200000 gpu on 0
    phase c-gpu-1-small-nospin run c 1 200000 gpu on 0 false "" 0
    phase c-gpu-1-direct run c 1 200000 gpu off 0
    phase c-gpu-1-pipeline run c 1 50000 gpu on 0 false $NOSMALL
    for wl in c b a; do
        phase $wl-gpu-16-spin run $wl 16 2000000 gpu on "$HC"
        phase $wl-gpu-16-nospin run $wl 16 2000000 gpu on "$HC" false "" 0
        [[ $wl == c ]] && phase $wl-gpu-16-pipeline run $wl 16 2000000 gpu on "$HC" false $NOSMALL 0
        phase $wl-cpu-16 run $wl 16 2000000 cpu off
    done
    for wl in c b a; do
        phase $wl-gpu-256-spin run $wl 256 4000000 gpu on "$HC"
        phase $wl-cpu-256 run $wl 256 4000000 cpu off
    done
    rm -f "$POOL"
    cat "$OUT/table.md"
    exit 0
fi
# A and B at 16 and 256 threads, GPU engine coalesced with the host cache, with a feature on (tag
# $1) and off (tag $2, JVM option $3), and the CPU engine at 16 threads; the table, then exit.
on_off_plan() {
    for wl in a b; do
        phase $wl-gpu-16-$1 run $wl 16 1000000 gpu on "$HC"
        phase $wl-gpu-16-$2 run $wl 16 1000000 gpu on "$HC" false "$3"
        phase $wl-cpu-16 run $wl 16 2000000 cpu off
        phase $wl-gpu-256-$1 run $wl 256 2000000 gpu on "$HC"
        phase $wl-gpu-256-$2 run $wl 256 2000000 gpu on "$HC" false "$3"
    done
    rm -f "$POOL"
    cat "$OUT/table.md"
    exit 0
}
# Small writing batches of distinct keys without grouping (DistinctKeys) against always grouping.
[[ "${PLAN:-full}" == writes ]] && on_off_plan distinct grouped -Dgphash.gpuTuning=distinctWritesMax=0
# Small writing batches of distinct keys in one launch (pipe_small_writes.cuh) against the graph of
# the ungrouped pipeline.
[[ "${PLAN:-full}" == smallwrites ]] && on_off_plan onelaunch graph -Dgphash.gpuTuning=smallWritesMax=0
if [[ "${PLAN:-full}" == threads ]]; then
    # Where a coalesced get's time goes as callers are added: workload C without the host cache
    # (every get a GPU batch) at 1 to 16 threads, spinning waits (default) and parking (spin 0).
    for th in 1 2 4 8 16; do
        phase c-gpu-$th-nocache run c $th $((100000 * th)) gpu on 0
    done
    phase c-gpu-16-nocache-nospin run c 16 1000000 gpu on 0 false "" 0
    phase c-gpu-16-nocache-direct run c 16 300000 gpu off 0
    rm -f "$POOL"
    cat "$OUT/table.md"
    exit 0
fi
if [[ "${PLAN:-full}" == adaptive ]]; then
    # The coalescer's adaptive wait against none, GPU engine with the host cache, and the CPU engine.
    against_cpu "c a" "16 256" adaptive "" noadapt "" true
    rm -f "$POOL"
    cat "$OUT/table.md"
    exit 0
fi
phase c-gpu-off-16 run c 16 100000 gpu off
phase c-gpu-on-16 run c 16 500000 gpu on
for wl in c b a; do
    phase $wl-gpu-cache-16 run $wl 16 2000000 gpu on "$HC"
    phase $wl-cpu-16 run $wl 16 2000000 cpu off
    phase $wl-gpu-cache-256 run $wl 256 2000000 gpu on "$HC"
    phase $wl-gpu-on-256 run $wl 256 2000000 gpu on
    phase $wl-cpu-256 run $wl 256 2000000 cpu off
done
rm -f "$POOL"
cat "$OUT/table.md"
