#!/usr/bin/env bash
# Issue 57, against the build before it: the DLRM and PageRank replays (GPU backend and the map) with
# this build and with the jars of .device-bundle/old-jars.tar (the same runtime and libraries), then
# bench ycsb's workload A from 16 threads at batches of 64 and 1024, both backends, this build; the
# host-operations GPU test first. Tables to $OUT/baseline.txt. MODE=coalescing: the DLRM replay with
# the front end's coalescer off and on, this build only.
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"; mkdir -p "$OUT"
LOGS=/tmp/d57b; mkdir -p $LOGS
bash cuda/device-unpack.sh || exit 1
if [[ "${MODE:-old}" == coalescing ]]; then
    # Whether the DLRM replay's drop came with the GPU backend's coalescing default (8a214be): this
    # build's replay with the front end's coalescer off (the default now) and on (the default before).
    T=/dev/shm/replay57c; mkdir -p $T
    timeout 120 /tmp/bundle/bin/run org.gphash.bench.TraceMain dlrm --updates --out $T/dlrm.trace > $LOGS/trace-dlrm.log 2>&1
    for co in off on; do
        JAVA_OPTS="-Xmx48g -Dgphash.bench.coalescing=$co" timeout 100 /tmp/bundle/bin/run org.gphash.bench.Replay $T/dlrm.trace \
            --backend gpu --baselines none --no-progress > $LOGS/replay-dlrm-$co.log 2>&1
        { echo "== dlrm, coalescing $co"; grep -E '^gphash-gpu ' $LOGS/replay-dlrm-$co.log | grep -v digest; } | tee -a "$OUT/baseline.txt"
    done
    rm -rf $T
    exit 0
fi
OUT=$LOGS GPHASH_TEST_TAG=-host timeout 200 bash cuda/device-check.sh tests HostOperationsGpuTest > $LOGS/t-host.txt 2>&1
echo "host test rc=$?" | tee -a "$OUT/baseline.txt"
grep -h -B2 -A14 "✘" $LOGS/tests-*.log | head -60 >> "$OUT/baseline.txt"
rm -rf /tmp/bundle-old && cp -r /tmp/bundle /tmp/bundle-old && tar xf .device-bundle/old-jars.tar -C /tmp/old-jars-x 2>/dev/null \
    || { mkdir -p /tmp/old-jars-x && tar xf .device-bundle/old-jars.tar -C /tmp/old-jars-x; }
for j in $(find /tmp/old-jars-x -name 'gphash-*-0.1.0-SNAPSHOT.jar'); do cp "$j" /tmp/bundle-old/lib/; done
T=/dev/shm/replay57b; mkdir -p $T
timeout 120 /tmp/bundle/bin/run org.gphash.bench.TraceMain dlrm --updates --out $T/dlrm.trace > $LOGS/trace-dlrm.log 2>&1
timeout 120 /tmp/bundle/bin/run org.gphash.bench.TraceMain pagerank --scale 20 --block 65536 --out $T/pr.trace > $LOGS/trace-pr.log 2>&1
for t in dlrm pr; do
    for b in bundle-old bundle; do
        JAVA_OPTS="-Xmx48g" timeout 120 /tmp/$b/bin/run org.gphash.bench.Replay $T/$t.trace --backend gpu \
            --baselines chm --no-progress > $LOGS/replay-$t-$b.log 2>&1
        { echo "== $t $b"; grep -E '^(gphash-gpu|chm) ' $LOGS/replay-$t-$b.log | grep -v digest; } | tee -a "$OUT/baseline.txt"
    done
done
rm -rf $T
for be in gpu cpu; do
    JAVA_OPTS="-Xmx48g" timeout 120 /tmp/bundle/bin/run org.gphash.bench.YcsbBench --backend $be --baselines none --threads 16 \
        --keys 4m --ops 4m --workloads a --batch-sweep 64,1024 --no-progress > $LOGS/bench-$be.log 2>&1
    { echo "== bench ycsb --backend $be"; grep -E '^gphash-|host time' $LOGS/bench-$be.log; } | tee -a "$OUT/baseline.txt"
done
