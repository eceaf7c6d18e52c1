#!/usr/bin/env bash
# Issue 30 on a machine with one or more GPUs (the device machine), from the bundle of
# cuda/make-device-bundle.sh: the GPU topology, the sharded GPU tests (or every GPU test with
# SUITE=all), then ShardScalingBench over GPUS (default 1,2), and with OLD (a folder of an earlier
# commit's jars: api, index, cuda, bench-ycsb, which shadow the bundle's) that build's bench over
# OLD_GPUS (default 2) in the same call. Logs go to $OUT, eight files at most (the device tool brings
# back 8: machine.txt, gpu.txt, tests.log, tests-off.log, shards.log, shards-old.log, main.log,
# summary.txt; JUnit's XML reports stay on the machine), the summaries to standard output.
#   GPUS=1,2,4 KEYS=16777216 OPS=4194304 THREADS=8 bench-ycsb/device-shards.sh
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
{ nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader; nvidia-smi topo -m; } > "$OUT/machine.txt" 2>&1
head -8 "$OUT/machine.txt"
# A watchdog: a test still running after WATCH seconds gets every JVM's thread dump (SIGQUIT) in the log, then is killed.
# Its output goes nowhere and its sleep is killed with it: a sleep left holding the script's output
# kept a device call open for the watchdog's whole time after the tests had ended.
( sleep "${WATCH:-240}"; pkill -QUIT java; sleep 3; pkill -KILL java ) > /dev/null 2>&1 &
watchdog=$!
# device-check.sh writes the whole log to $OUT/tests*.log; its JUnit reports go to /tmp here.
export GPHASH_JUNIT_DIR=/tmp/gphash-junit
rm -f /tmp/tests-summary.txt /tmp/tests-off-summary.txt  # a warm machine keeps /tmp between calls
if [[ "${SUITE:-sharded}" == none ]]; then
    echo "tests skipped (SUITE=none)"
elif [[ "${SUITE:-sharded}" == all ]]; then
    GPHASH_TEST_TAIL=15 cuda/device-check.sh tests > /tmp/tests-summary.txt 2>&1
    echo "tests rc=$?" >> /tmp/tests-summary.txt
else
    GPHASH_TEST_TAIL=15 cuda/device-check.sh tests ${TESTS:-ShardedGpuTest HostBatchesKillTest} > /tmp/tests-summary.txt 2>&1
    echo "tests rc=$?" >> /tmp/tests-summary.txt
fi
if [[ "${OFF:-0}" == 1 ]]; then  # the suite again on the pool path (mirror off)
    GPHASH_TEST_OPTS=-Dgphash.indexMirror=OFF GPHASH_TEST_TAG=-off GPHASH_TEST_TAIL=15 cuda/device-check.sh tests \
        > /tmp/tests-off-summary.txt 2>&1
    echo "tests (mirror off) rc=$?" >> /tmp/tests-off-summary.txt
    echo "== mirror off"; tail -16 /tmp/tests-off-summary.txt
fi
pkill -P "$watchdog" 2>/dev/null; kill "$watchdog" 2>/dev/null
[[ -f /tmp/tests-summary.txt ]] && { echo "== with the mirror"; tail -16 /tmp/tests-summary.txt; }
[[ "${BENCH:-1}" == 1 ]] || exit 0
cuda/device-check.sh main org.gphash.bench.gpu.ShardScalingBench --gpus "${GPUS:-1,2}" --keys "${KEYS:-16777216}" \
    --ops "${OPS:-4194304}" --threads "${THREADS:-8}" > "$OUT/shards.log" 2>&1
echo "bench rc=$?"
grep -E "^\||open of|GPUs visible|Exception|Error|stages:" "$OUT/shards.log" > "$OUT/summary.txt"
grep -E "^\||open of|GPUs visible|Exception|Error" "$OUT/shards.log"
if [[ -n "${OLD:-}" ]]; then
    /tmp/bundle/jre/bin/java --enable-native-access=ALL-UNNAMED -Xmx48g --add-opens java.base/java.nio=ALL-UNNAMED \
        --add-opens java.base/sun.nio.ch=ALL-UNNAMED -cp "$PWD/$OLD/*:/tmp/bundle/lib/*" org.gphash.bench.gpu.ShardScalingBench \
        --gpus "${OLD_GPUS:-2}" --keys "${KEYS:-16777216}" --ops "${OPS:-4194304}" --threads "${THREADS:-8}" \
        > "$OUT/shards-old.log" 2>&1
    echo "old bench ($OLD) rc=$?"
    grep -E "^\||open of|GPUs visible|Exception|Error" "$OUT/shards-old.log" | sed 's/^/old: /' | tee -a "$OUT/summary.txt"
fi
