#!/usr/bin/env bash
# Issue 57 on the GPU machine: the new GPU test on both paths, every GPU test (a thread dump if the
# suite outlives WATCH seconds), a small-batch comparison (SMALL=1), then YCSB's client
# (PLAN=${PLAN:-hostwrites}). TESTS=0 skips the tests, ALL=0 the whole suite, YCSB=0 the client;
# OPENPROBE=1 times a fresh JVM's open on both backends (OpenStagesProbe); CRASH=1 runs crashtest --mixed on the GPU backend; HEAPBENCH=1 the heaps' allocators alone (issue 53); GAPS=1 one GPU batch after idle gaps; SINGLES=1 adds single calls without YCSB's client (SingleCallsBench) and their profile; REPLAY=1 adds the DLRM and PageRank replays, BENCH=1 bench ycsb at batch sizes 64 to 2^18.
# The tests and the client run unless turned off: the replays alone are TESTS=0 YCSB=0 REPLAY=1.
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"; mkdir -p "$OUT"
LOGS=/tmp/d57; mkdir -p $LOGS
export GPHASH_TEST_TAIL=25 GPHASH_JUNIT_DIR=$LOGS/junit
t0=$(date +%s)
bash cuda/device-unpack.sh || exit 1
if [[ "${TESTS:-1}" == 1 ]]; then
    [[ "${HOSTTEST:-1}" == 1 ]] && OUT=$LOGS GPHASH_TEST_TAG=-host timeout 240 bash cuda/device-check.sh tests HostOperationsGpuTest > $LOGS/t-host.txt 2>&1
    echo "host test rc=$?" | tee -a "$OUT/summary.txt"
    [[ "${HOSTTEST:-1}" == 1 ]] && OUT=$LOGS GPHASH_TEST_TAG=-hostpool GPHASH_TEST_OPTS=-Dgphash.indexMirror=OFF timeout 240 bash cuda/device-check.sh tests \
        HostOperationsGpuTest ConditionalWritesGpuTest JournaledGpuTest > $LOGS/t-hostpool.txt 2>&1
    echo "pool-path tests rc=$?" | tee -a "$OUT/summary.txt"
    if [[ "${ALL:-1}" == 1 ]]; then
        OUT=$LOGS GPHASH_TEST_TAG=-all bash cuda/device-check.sh tests > $LOGS/t-all.txt 2>&1 &
        suite=$!
        for ((s = 0; s < ${WATCH:-240}; s += 5)); do kill -0 $suite 2>/dev/null || break; sleep 5; done
        if kill -0 $suite 2>/dev/null; then
            echo "suite still running after ${WATCH:-240} s: thread dump" | tee -a "$OUT/summary.txt"
            pkill -QUIT -f ConsoleLauncher; sleep 3; pkill -KILL -f ConsoleLauncher
            grep -v "^\s*$" $LOGS/tests-all.log | grep -A25 -E '"(main|Thread-|ForkJoin|gphash)' | head -400 > "$OUT/dump.txt"
        fi
        wait $suite; echo "all GPU tests rc=$?" | tee -a "$OUT/summary.txt"
        grep -E "tests (successful|failed|aborted|skipped)" $LOGS/tests-all.log | tee -a "$OUT/summary.txt"
        grep -E "✘|✔" $LOGS/tests-all.log | tail -40 > "$OUT/last-tests.txt"
    fi
    grep -h -B2 -A14 "✘" $LOGS/tests-*.log | head -200 > "$OUT/failures.txt"
    echo "tests took $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
fi
if [[ "${OPENPROBE:-0}" == 1 ]]; then
    # Where a fresh JVM's open of a 1M-item pool goes (OpenStagesProbe): GPU backend and CPU backend,
    # two JVMs each, with the classes the first open loaded, by package.
    P=/dev/shm/openprobe.pool; rm -f $P
    JAVA_OPTS="-Xmx8g" /tmp/bundle/bin/run org.gphash.bench.gpu.OpenStagesProbe create $P 1000000 > $LOGS/probe-create.log 2>&1
    for m in check pool check pool; do
        JAVA_OPTS="-Xmx8g" /tmp/bundle/bin/run org.gphash.bench.gpu.OpenStagesProbe $m $P 2>&1 | grep "^PROBE" | tee -a "$OUT/openprobe.txt"
    done
    for be in gpu cpu gpu cpu; do
        JAVA_OPTS="-Xmx8g -verbose:class" /tmp/bundle/bin/run org.gphash.bench.gpu.OpenStagesProbe open $P $be > $LOGS/probe-$be.log 2>&1
        { grep "^PROBE " $LOGS/probe-$be.log
          awk '/PROBE-MARK before open 1/{c=1;next} /PROBE-MARK after open 1/{c=0} c && /class,load/{for(i=1;i<=NF;i++) if($i ~ /class,load/){split($(i+1),a,".");k=a[1]"."a[2];n[k]++;t++}} END{printf "classes loaded by open 1: %d;", t; for(k in n) if(n[k]>=10) printf " %s %d", k, n[k]; print ""}' $LOGS/probe-$be.log
        } | tee -a "$OUT/openprobe.txt"
    done
    rm -f $P
fi
if [[ "${SMALL:-0}" == 1 ]]; then
    # One thread's small batches (1 to 4096 operations, all reads and half writes): host or GPU by
    # measured cost (this build), against every batch on the GPU (hostBatchesMax=0), same machine.
    OUT=$LOGS bash cuda/device-check.sh main org.gphash.bench.gpu.SmallBatchesBench --rounds 4000 > "$OUT/small-host.txt" 2>&1
    [[ "${SMALL_GPUONLY:-1}" == 1 ]] && OUT=$LOGS GPHASH_JAVA_EXTRA=-Dgphash.gpuTuning=hostBatchesMax=0 bash cuda/device-check.sh main \
        org.gphash.bench.gpu.SmallBatchesBench --rounds 4000 > "$OUT/small-gpu.txt" 2>&1
fi
if [[ "${GAPS:-0}" == 1 ]]; then
    # One GPU batch's time after the GPU idled 0 to 100 ms (spun or slept): what a re-measure among host batches pays.
    OUT=$LOGS bash cuda/device-check.sh main org.gphash.bench.gpu.IdleGapsBench > "$OUT/gaps.txt" 2>&1
fi
if [[ "${SINGLES:-0}" == 1 ]]; then
    # Single calls from 16 threads without YCSB's client, GPU backend against CPU backend on one pool
    # (SingleCallsBench), half gets and all gets; then a flight recording of the GPU backend's half.
    for r in 0.5 1.0; do
        JAVA_OPTS="-Xmx16g" /tmp/bundle/bin/run org.gphash.bench.gpu.SingleCallsBench --threads 16 --seconds 4 --reads $r \
            --keys 1048576 > $LOGS/singles-$r.log 2>&1
        grep -E '^\||gpu backend' $LOGS/singles-$r.log | tee -a "$OUT/singles.txt"
    done
    JAVA_OPTS="-Xmx16g -XX:StartFlightRecording=filename=$LOGS/singles.jfr,settings=profile" /tmp/bundle/bin/run \
        org.gphash.bench.gpu.SingleCallsBench --threads 16 --seconds 8 --reads 0.5 --backends gpu > $LOGS/singles-jfr.log 2>&1
    bash bench-ycsb/jfr-summary.sh $LOGS/singles.jfr > "$OUT/singles-profile.txt" 2>&1
fi
if [[ "${CRASH:-0}" == 1 ]]; then
    # A kill in the middle of mixed host and GPU writing loses nothing acknowledged: the GPU backend,
    # four threads, the even ones single calls (on the host), the odd ones batches of 4096 (on the GPU).
    JAVA_OPTS="-Xmx4g" timeout 300 /tmp/bundle/bin/run org.gphash.crashtest.CrashTest --backend gpu --threads 4 --batch 4096 \
        --mixed --keys 100000 --rounds ${CRASH_ROUNDS:-40} --seed 5757 --max-kill-ms 2000 /dev/shm/crash57.pool > $LOGS/crash.log 2>&1
    echo "crashtest --mixed rc=$?" | tee -a "$OUT/summary.txt"
    grep -E "kills landed|^crashtest: backend=|check failures" $LOGS/crash.log | tail -3 | tee -a "$OUT/summary.txt"
fi
if [[ "${REPLAY:-0}" == 1 ]]; then
    # The trace replays, batches in file order: this build (host or GPU by cost) and, with
    # REPLAY_GPUONLY=1, every batch on the GPU (hostBatchesMax=0), against ConcurrentHashMap and the
    # CPU-assisted path. REPLAY_TRACES picks traces (dlrm pr), REPLAY_THREADS the replay's threads per
    # batch (default: the CPU count, the command's default), REPLAY_JFR=1 a flight recording of the GPU
    # backend's replay alone. Each replay's whole log (its batch kinds, the host's stage times) to $OUT.
    T=/dev/shm/replay57; mkdir -p $T
    # Generating PageRank's trace (scale 20) took over 120 s on a cold machine (2026-12-02): TRACE_WATCH.
    # The two traces side by side (each uses a few cores): about 112 s together on a cold H200 machine.
    timeout ${TRACE_WATCH:-300} /tmp/bundle/bin/run org.gphash.bench.TraceMain dlrm --updates --out $T/dlrm.trace > $LOGS/trace-dlrm.log 2>&1 &
    [[ " ${REPLAY_TRACES:-dlrm pr} " == *" pr "* ]] && timeout ${TRACE_WATCH:-300} /tmp/bundle/bin/run org.gphash.bench.TraceMain pagerank \
        --scale 20 --block 65536 --out $T/pr.trace > $LOGS/trace-pr.log 2>&1
    wait
    echo "traces written after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
    variants=("")
    [[ "${REPLAY_GPUONLY:-1}" == 1 ]] && variants+=(-Dgphash.gpuTuning=hostBatchesMax=0)
    # REPLAY_VARIANTS: JVM options of each GPU-backend replay instead, space-separated ('_' for none).
    # A "+" inside a variant separates its options.
    [[ -n "${REPLAY_VARIANTS:-}" ]] && { variants=(); for v in $REPLAY_VARIANTS; do v="${v#_}"; variants+=("${v//+/ }"); done; }
    for t in ${REPLAY_TRACES:-dlrm pr}; do
        for th in ${REPLAY_THREADS:-0}; do
            vi=0
            for opts in "${variants[@]}"; do
                vi=$((vi + 1))
                # REPLAY_BUNDLES="/tmp/bundle /tmp/bundle-old": this build, then an earlier one (OLD=DIR).
                for b in ${REPLAY_BUNDLES:-/tmp/bundle}; do
                    name=$t-t$th-v$vi${opts:+-${opts##*[.=]}}-${b##*/}; name=${name//\//_}
                    # -Xms32g: collections of the default heap's growth took hundreds of ms inside runs
                    # (docs/lab/2026-12-02-host-route-timers-and-turns.md).
                    JAVA_OPTS="-Xmx48g -Xms32g $opts" timeout 150 $b/bin/run org.gphash.bench.Replay $T/$t.trace --backend gpu \
                        --baselines ${REPLAY_BASELINES:-cpu-assisted,chm} $([[ $th != 0 ]] && echo --threads $th) --no-progress \
                        > $OUT/replay-$name.log 2>&1
                    { echo "== $name after $(( $(date +%s) - t0 )) s"; grep -E '^(gphash|cpu-assisted|chm|  [a-z]+ +gphash)' $OUT/replay-$name.log; } | tee -a "$OUT/replay.txt"
                done
            done
        done
        if [[ "${REPLAY_JFR:-0}" == 1 ]]; then
            JAVA_OPTS="-Xmx48g ${REPLAY_JFR_OPTS:-} -XX:StartFlightRecording=filename=$LOGS/replay-$t.jfr,settings=profile,jdk.ExecutionSample#period=1ms,jdk.JavaMonitorEnter#threshold=1ms,jdk.ThreadPark#threshold=1ms" \
                timeout 150 /tmp/bundle/bin/run org.gphash.bench.Replay $T/$t.trace --backend gpu --baselines none \
                $([[ ${REPLAY_JFR_THREADS:-0} != 0 ]] && echo --threads $REPLAY_JFR_THREADS) --no-progress > $LOGS/replay-jfr-$t.log 2>&1
            bash bench-ycsb/jfr-summary.sh $LOGS/replay-$t.jfr > "$OUT/replay-profile-$t.txt" 2>&1
            cp $LOGS/replay-$t.jfr "$OUT/" 2>/dev/null
        fi
    done
    rm -rf $T
fi
if [[ "${HEAPBENCH:-0}" == 1 ]]; then
    # Issue 53: format 3's heap of size classes against format 2's bitmap, allocators alone, 1 to 16 threads.
    JAVA_OPTS="-Xmx8g" timeout 120 /tmp/bundle/bin/run org.gphash.bench.HeapBench --threads 16 --seconds 2 > "$OUT/heapbench.txt" 2>&1
fi
BENCH_JFR_BE=${BENCH_JFR_BE:-gpu}
if [[ "${BENCH_JFR:-0}" == 1 ]]; then
    # Where bench ycsb's A at batches of 64 from 16 threads spends the GPU backend's time (and, with
    # BENCH_JFR_BE=gpu,cpu, the CPU backend's beside it): a flight recording each.
    for be in ${BENCH_JFR_BE//,/ }; do
        JAVA_OPTS="-Xmx48g ${BENCH_JO:-} -XX:StartFlightRecording=filename=$LOGS/bench-$be.jfr,settings=profile,jdk.ExecutionSample#period=1ms,jdk.JavaMonitorEnter#threshold=1ms,jdk.ThreadPark#threshold=1ms" timeout 200 /tmp/bundle/bin/run \
            org.gphash.bench.YcsbBench --backend $be --baselines none --threads 16 --keys 4m --ops 4m --workloads ${BENCH_JFR_WL:-c,a} \
            --batch-sweep ${BENCH_JFR_BATCH:-64} --no-progress > $LOGS/bench-jfr-$be.log 2>&1
        { grep -v '^\s*$' $LOGS/bench-jfr-$be.log | tail -12; bash bench-ycsb/jfr-summary.sh $LOGS/bench-$be.jfr; } > "$OUT/bench-profile-$be.txt" 2>&1
    done
fi
if [[ "${BENCH:-0}" == 1 ]]; then
    # bench ycsb from 16 threads at the batch sizes, GPU backend and CPU backend, same call.
    for be in gpu cpu; do
        JAVA_OPTS="-Xmx48g" timeout 200 /tmp/bundle/bin/run org.gphash.bench.YcsbBench --backend $be --baselines none --threads 16 \
            --keys 4m --ops 4m --workloads ${BENCH_WL:-a,c} --batch-sweep ${SWEEP:-64,1024,16384,262144} --no-progress > $LOGS/bench-$be.log 2>&1
        { echo "== bench ycsb --backend $be"; grep -v '^\s*$' $LOGS/bench-$be.log | tail -120; } | tee -a "$OUT/bench.txt"
    done
fi
if [[ "${YCSB:-1}" == 1 && -z "${YCSB_VARIANTS:-}" ]]; then
    TABLE="$OUT/ycsb-rows.md" OUT=$LOGS/ycsb PLAN=${PLAN:-hostwrites} REC=${REC:-1000000} \
        bash bench-ycsb/device-ycsb-coalescing.sh > /dev/null 2>&1
    [[ -f $LOGS/ycsb/opens.txt ]] && cp $LOGS/ycsb/opens.txt "$OUT/"
fi
# YCSB_VARIANTS: the YCSB plan once per variant, in turn, each with its JVM options added to JO ('_'
# for none, '+' between options), each from a fresh load: ycsb-rows-vN.md and opens-vN.txt. A variant
# "@old" runs this build's bundle with OLD=DIR's gphash jars over it (an earlier build, same call;
# cuda/device-unpack.sh makes it).
vi=0
for v in ${YCSB_VARIANTS:-}; do
    vi=$((vi + 1)); v="${v#_}"; v="${v//+/ }"
    bundle=/tmp/bundle; [[ $v == @old ]] && { bundle=/tmp/bundle-old; v=""; }
    rm -rf $LOGS/ycsb-v$vi
    TABLE="$OUT/ycsb-rows-v$vi.md" OUT=$LOGS/ycsb-v$vi PLAN=${PLAN:-hostwrites} REC=${REC:-1000000} JO="${JO:-} $v" \
        BUNDLE=$bundle bash bench-ycsb/device-ycsb-coalescing.sh > /dev/null 2>&1
    { echo "== variant $vi: $bundle $v"; cat "$OUT/ycsb-rows-v$vi.md" 2>/dev/null; } | tee -a "$OUT/ycsb-variants.md"
    [[ -f $LOGS/ycsb-v$vi/opens.txt ]] && cp $LOGS/ycsb-v$vi/opens.txt "$OUT/opens-v$vi.txt"
done
cat "$OUT/summary.txt" 2>/dev/null; head -60 "$OUT/failures.txt" 2>/dev/null; cat "$OUT/ycsb-rows.md" 2>/dev/null
