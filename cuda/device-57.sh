#!/usr/bin/env bash
# Issue 57 on the GPU machine: the new GPU test, every GPU test on the mirror path, the host-writes
# tests on the pool path, then YCSB's client (PLAN=hostwrites). Logs under $OUT.
#   TESTS=0 skips the tests, YCSB=0 the client; ALL=0 runs only the new test of the suite.
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"; mkdir -p "$OUT"
export GPHASH_TEST_TAIL=25
t0=$(date +%s)
if [[ "${TESTS:-1}" == 1 ]]; then
    GPHASH_TEST_TAG=-host timeout 240 bash cuda/device-check.sh tests HostOperationsGpuTest > "$OUT/t-host.txt" 2>&1
    echo "host test rc=$?" | tee -a "$OUT/summary.txt"
    GPHASH_TEST_TAG=-hostpool GPHASH_TEST_OPTS=-Dgphash.indexMirror=OFF timeout 240 bash cuda/device-check.sh tests \
        HostOperationsGpuTest ConditionalWritesGpuTest JournaledGpuTest > "$OUT/t-hostpool.txt" 2>&1
    echo "pool-path tests rc=$?" | tee -a "$OUT/summary.txt"
    if [[ "${ALL:-1}" == 1 ]]; then
        GPHASH_TEST_TAG=-all timeout 330 bash cuda/device-check.sh tests > "$OUT/t-all.txt" 2>&1
        echo "all GPU tests rc=$?" | tee -a "$OUT/summary.txt"
        grep -E "tests (successful|failed|aborted|skipped)" "$OUT/tests-all.log" | tee -a "$OUT/summary.txt"
    fi
    grep -h -B2 -A14 "✘" "$OUT"/tests-*.log | head -150 > "$OUT/failures.txt"
    echo "tests took $(( $(date +%s) - t0 )) s" | tee -a "$OUT/summary.txt"
fi
[[ "${YCSB:-1}" == 1 ]] && PLAN=hostwrites REC=${REC:-1000000} bash bench-ycsb/device-ycsb-coalescing.sh > "$OUT/ycsb.txt" 2>&1
cat "$OUT/summary.txt"; head -80 "$OUT/failures.txt"; cat "$OUT/table.md" 2>/dev/null
if [[ "${SMALL:-0}" == 1 ]]; then
    # One thread's small batches (1 to 4096 operations, all reads and half writes): host or GPU by
    # measured cost (this build), against every batch on the GPU (hostBatchesMax=0), same machine.
    bash cuda/device-check.sh main org.gphash.bench.gpu.GpuTargetsBench --parts small --rounds 4000 > "$OUT/small-host.txt" 2>&1
    GPHASH_JAVA_EXTRA=-Dgphash.gpuTuning=hostBatchesMax=0 bash cuda/device-check.sh main org.gphash.bench.gpu.GpuTargetsBench \
        --parts small --rounds 4000 > "$OUT/small-gpu.txt" 2>&1
    echo "== host or GPU by cost"; grep '^|' "$OUT/small-host.txt"; echo "== GPU only"; grep '^|' "$OUT/small-gpu.txt"
fi
