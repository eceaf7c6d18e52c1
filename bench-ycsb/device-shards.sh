#!/usr/bin/env bash
# Issue 30 on a machine with one or more GPUs (the device machine), from the bundle of
# cuda/make-device-bundle.sh: the GPU topology, the sharded GPU tests (or every GPU test with
# SUITE=all), then ShardScalingBench over GPUS (default 1,2). Logs and a summary go to $OUT.
#   GPUS=1,2,4 KEYS=16777216 OPS=4194304 THREADS=8 bench-ycsb/device-shards.sh
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
nvidia-smi topo -m > "$OUT/topo.txt" 2>&1
nvidia-smi --query-gpu=index,name,memory.total --format=csv,noheader | tee "$OUT/gpus.txt"
# A watchdog: a test still running after WATCH seconds gets every JVM's thread dump (SIGQUIT) in the log, then is killed.
# Its output goes nowhere and its sleep is killed with it: a sleep left holding the script's output
# kept a device call open for the watchdog's whole time after the tests had ended.
( sleep "${WATCH:-240}"; pkill -QUIT java; sleep 3; pkill -KILL java ) > /dev/null 2>&1 &
watchdog=$!
if [[ "${SUITE:-sharded}" == none ]]; then
    echo "tests skipped (SUITE=none)" > "$OUT/tests-summary.txt"
elif [[ "${SUITE:-sharded}" == all ]]; then
    GPHASH_TEST_TAIL=15 cuda/device-check.sh tests > "$OUT/tests-summary.txt" 2>&1
else
    GPHASH_TEST_TAIL=15 cuda/device-check.sh tests ${TESTS:-ShardedGpuTest HostBatchesKillTest} > "$OUT/tests-summary.txt" 2>&1
fi
echo "tests rc=$?" >> "$OUT/tests-summary.txt"
if [[ "${OFF:-0}" == 1 ]]; then  # the suite again on the pool path (mirror off)
    GPHASH_TEST_OPTS=-Dgphash.indexMirror=OFF GPHASH_TEST_TAG=-off GPHASH_TEST_TAIL=15 cuda/device-check.sh tests \
        > "$OUT/tests-off-summary.txt" 2>&1
    echo "tests (mirror off) rc=$?" >> "$OUT/tests-off-summary.txt"
    tail -16 "$OUT/tests-off-summary.txt"
fi
pkill -P "$watchdog" 2>/dev/null; kill "$watchdog" 2>/dev/null
tail -16 "$OUT/tests-summary.txt"
[[ "${BENCH:-1}" == 1 ]] || exit 0
cuda/device-check.sh main org.gphash.bench.gpu.ShardScalingBench --gpus "${GPUS:-1,2}" --keys "${KEYS:-16777216}" \
    --ops "${OPS:-4194304}" --threads "${THREADS:-8}" > "$OUT/shards.log" 2>&1
echo "bench rc=$?"
grep -E "^\||open of|GPUs visible|Exception|Error" "$OUT/shards.log" | tee "$OUT/summary.txt"
grep -E "stages:" "$OUT/shards.log" > "$OUT/stages.txt"
grep -E "^open of" "$OUT/shards.log" > "$OUT/opens.txt"
