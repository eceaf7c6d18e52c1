#!/usr/bin/env bash
# Issue 57's last check of a session with little device time: the host-operations and coalesced GPU
# tests, the DLRM replay with the index's defaults, and YCSB's A from 16 threads on both backends.
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"; mkdir -p "$OUT"
LOGS=/tmp/d57f; mkdir -p $LOGS
bash cuda/device-unpack.sh || exit 1
OUT=$LOGS GPHASH_TEST_TAG=-host timeout 100 bash cuda/device-check.sh tests HostOperationsGpuTest CoalescedGpuTrafficTest > $LOGS/t.txt 2>&1
echo "tests rc=$?" | tee -a "$OUT/final.txt"
grep -hE "tests (successful|failed)" $LOGS/tests-*.log | tee -a "$OUT/final.txt"
grep -h -B2 -A10 "✘" $LOGS/tests-*.log | head -40 >> "$OUT/final.txt"
T=/dev/shm/replay57f; mkdir -p $T
timeout 60 /tmp/bundle/bin/run org.gphash.bench.TraceMain dlrm --updates --out $T/dlrm.trace > $LOGS/trace.log 2>&1
JAVA_OPTS="-Xmx48g" timeout 60 /tmp/bundle/bin/run org.gphash.bench.Replay $T/dlrm.trace --backend gpu --baselines none \
    --no-progress > $LOGS/replay.log 2>&1
{ echo "== dlrm, defaults"; grep -E '^gphash-gpu ' $LOGS/replay.log | grep -v digest; } | tee -a "$OUT/final.txt"
rm -rf $T
TABLE="$OUT/final.txt" OUT=$LOGS/ycsb PLAN=final57 REC=1000000 timeout 80 bash bench-ycsb/device-ycsb-coalescing.sh > /dev/null 2>&1
grep -hE 'gphash: |RunTime' $LOGS/ycsb/a-*.log >> "$OUT/final.txt"
