#!/usr/bin/env bash
# Issue 53 on the GPU machine (step 3a: format 3 pools of one value size on the kernels), one call:
#   SUITE="2 3"     every GPU test with the test pools in each format (GpuTestSupport.POOL_FORMAT); an
#                   entry F/B sets their values' bytes too (GpuTestSupport.VALUE_SIZE, default 128: bare
#                   in format 3; 3/120 runs format 3's framed values)
#   CLASSES="A B"   only these test classes (simple names) in each format of SUITE
#   TEST_OPTS       more JVM options for the tests, e.g. -Dgphash.indexMirror=OFF (the pool path)
#   TARGETS="2 3"   GpuTargetsBench --parts targets with the pools in each format, in turn (ROUNDS rounds);
#                   an entry F/B sets the values' bytes (default VS, else 128), e.g. "3/120 2/128"
#   KEYS, OPS       the bench's keys loaded and operations per row (default 2^24, 2^22)
#   CRASH=3         crashtest --backend gpu --mixed on a pool of that format (CRASH_ROUNDS rounds)
#   YCSB="gpu:mixed gpu:3 gpu:2 cpu:mixed"  bench ycsb from 16 threads (4M keys, 4M operations a workload,
#                   WL, default load,c,a; SWEEP, default 4096,65536) per entry BACKEND:VALUES, VALUES mixed
#                   (--value-lengths mixed: 16 B-4 KiB on a format 3 pool) or 2 / 3 (128-byte values on a
#                   pool of that format): host batches and single calls of values of any length;
#                   YOPS: operations a workload (default 4m);
#                   YCSB_OPTS: more JVM options for it (e.g. -Dgphash.bench.timeline=on: host and GPU stages);
#                   YCSB_ARGS: more bench options (e.g. --warmup 4m); BUNDLE=/tmp/bundle-old: an earlier
#                   build (OLD=DIR, cuda/device-unpack.sh)
#                   THREAD_CPU=1: every thread's CPU time twice a second (cuda/thread-cpu.sh); GC and
#                   safepoints are logged always (jvm-*.log)
# Logs under $OUT (summary.txt last lines: the table); from the bundle of cuda/make-device-bundle.sh.
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"; mkdir -p "$OUT"
LOGS=/tmp/d53; mkdir -p $LOGS
export GPHASH_TEST_TAIL=25 GPHASH_JUNIT_DIR=$LOGS/junit
t0=$(date +%s)
bash cuda/device-unpack.sh || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
for e in ${SUITE:-}; do
    read -ra classes <<< "${CLASSES:-}"
    f=${e%/*}; vs=128; [[ "$e" == */* ]] && vs=${e#*/}; tag=f$f-v$vs
    OUT=$LOGS GPHASH_TEST_TAG=-$tag GPHASH_TEST_OPTS="-Dgphash.test.poolFormat=$f -Dgphash.test.valueSize=$vs ${TEST_OPTS:-}" \
        timeout ${WATCH:-300} bash cuda/device-check.sh tests "${classes[@]}" > $LOGS/t-$tag.txt 2>&1
    echo "GPU tests, pools in format $f, values of $vs bytes ${TEST_OPTS:-}: rc=$? after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
    grep -E "tests (successful|failed|aborted)" $LOGS/tests-$tag.log | tee -a "$OUT/summary.txt"
    grep -h -B2 -A16 "✘" $LOGS/tests-$tag.log | head -150 > "$OUT/failures-$tag.txt"
done
if [[ -n "${CRASH:-}" ]]; then
    # kills in the middle of mixed single calls (host) and batches (GPU), the pool in format $CRASH
    JAVA_OPTS="-Xmx4g" timeout 240 /tmp/bundle/bin/run org.gphash.crashtest.CrashTest --backend gpu --threads 4 --batch 4096 \
        --mixed --keys 100000 --rounds ${CRASH_ROUNDS:-20} --seed 5353 --max-kill-ms 2000 --pool-format $CRASH \
        /dev/shm/crash53.pool > $LOGS/crash.log 2>&1
    echo "crashtest --mixed --pool-format $CRASH rc=$? after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
    grep -E "kills landed|^crashtest: backend=|check failures|lost|torn" $LOGS/crash.log | tail -4 | tee -a "$OUT/summary.txt"
    cp $LOGS/crash.log "$OUT/"
fi
for e in ${YCSB:-}; do
    be=${e%%:*}; vl=${e#*:}
    # an earlier build's logs apart from this one's
    [[ -n "${BUNDLE:-}" ]] && vl="$vl-${BUNDLE##*/}"
    if [[ "$vl" == mixed* ]]; then opts=(--value-lengths mixed); jo=""; else opts=(); jo="-Dgphash.bench.poolFormat=${vl%%-*}"; fi
    [[ -n "${THREAD_CPU:-}" ]] && { bash cuda/thread-cpu.sh $LOGS/threads-$be-$vl.txt & }
    # -Xms32g: with the default heap, young collections copied the bench's generated streams, 182 ms
    # within one 16M-operation phase of A (docs/lab/2026-12-02-host-route-timers-and-turns.md).
    JAVA_OPTS="-Xmx48g -Xms32g $jo ${YCSB_OPTS:-} -Xlog:gc,safepoint:file=$LOGS/jvm-$be-$vl.log" timeout ${YCSBWATCH:-200} \
        ${BUNDLE:-/tmp/bundle}/bin/run org.gphash.bench.YcsbBench --backend $be --baselines none \
        --threads 16 --keys 4m --ops ${YOPS:-4m} --workloads ${WL:-load,c,a} --batch-sweep ${SWEEP:-4096,65536} --no-progress "${opts[@]}" ${YCSB_ARGS:-} \
        > $LOGS/ycsb-$be-$vl.log 2>&1
    echo "bench ycsb --backend $be, values $vl: rc=$? after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
    wait
    grep -cE "Pause|Safepoint" $LOGS/jvm-$be-$vl.log | sed "s/^/  JVM pauses and safepoints logged: /" | tee -a "$OUT/summary.txt"
    grep -E '^(\| |gphash|batch)' $LOGS/ycsb-$be-$vl.log | tail -14 | tee -a "$OUT/summary.txt"
    cp $LOGS/ycsb-$be-$vl.log "$OUT/"
done
for ((r = 1; r <= ${ROUNDS:-1}; r++)); do
    for t in ${TARGETS:-}; do
        f=${t%/*}; vs=${VS:-128}; [[ "$t" == */* ]] && vs=${t#*/}; tag=f$f-v$vs
        OUT=$LOGS timeout ${BENCHWATCH:-400} bash cuda/device-check.sh main org.gphash.bench.gpu.GpuTargetsBench --parts targets \
            --pool-format $f --value-size $vs --keys ${KEYS:-16777216} --ops ${OPS:-4194304} > $LOGS/targets-$tag-r$r.txt 2>&1
        echo "targets, format $f, values of $vs bytes, round $r: rc=$? after $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
        cp $LOGS/targets-$tag-r$r.txt "$OUT/"
        grep -E "^\| (positive|negative|update|insert|delete|YCSB)" $LOGS/targets-$tag-r$r.txt | sort -u | cut -c1-150 | sed "s/^/$tag r$r /" >> $LOGS/table.txt
    done
done
[[ -f $LOGS/table.txt ]] && cat $LOGS/table.txt | tee -a "$OUT/summary.txt"
ls $LOGS/jvm-*.log $LOGS/threads-*.txt > /dev/null 2>&1 && tar czf "$OUT/jvm-and-threads.tgz" -C $LOGS $(cd $LOGS && ls jvm-*.log threads-*.txt 2>/dev/null)
echo "took $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
