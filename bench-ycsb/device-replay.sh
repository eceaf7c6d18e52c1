#!/usr/bin/env bash
# DLRM and PageRank trace replay on the GPU machine: the GPU engine on batches resident in GPU memory
# (gphash-gpu-device, as a GPU application issues them), the GPU engine on host batches (gphash-gpu)
# and the CPU-assisted path (the CPU engine plus a GPU application's copies), one after another on
# the same trace, same run. Run from the repository root with the device bundle at .device-bundle:
#   bench-ycsb/device-replay.sh     (SAMPLES=DLRM samples, default 500k; SCALE=R-MAT scale, default 18)
# AHEAD=1 also replays both with -Dgphash.gpuTuning=growHeapAhead=false (heap growths not prepared on
# a second thread ahead of need: the baseline of HeapGrowthAhead, on by default).
# (Growing the pool in place and pinning reused batches measured faster and have no switch back:
# docs/DESIGN.md.)
# Logs, the traces' descriptions and a table go under $OUT.
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
bash cuda/device-unpack.sh || exit 1
SAMPLES="${SAMPLES:-500k}"
SCALE="${SCALE:-18}"
run() { JAVA_OPTS="-Xmx48g ${GPHASH_JAVA_EXTRA:-} --add-opens java.base/java.nio=ALL-UNNAMED" /tmp/bundle/bin/run "$@"; }
T=/dev/shm/replay-traces
mkdir -p "$T"
run org.gphash.bench.TraceMain dlrm --samples "$SAMPLES" --out "$T/dlrm.trace" > "$OUT/trace-dlrm.log" 2>&1 || { tail "$OUT/trace-dlrm.log"; exit 1; }
run org.gphash.bench.TraceMain pagerank --scale "$SCALE" --out "$T/pr.trace" > "$OUT/trace-pr.log" 2>&1 || { tail "$OUT/trace-pr.log"; exit 1; }
replay() {  # tag trace [JVM options]
    local tag=$1 t=$2
    GPHASH_JAVA_EXTRA="${3:-}" run org.gphash.bench.Replay "$T/$t.trace" --backend gpu --baselines gpu-device,cpu-assisted \
        --no-progress --json "$OUT/replay-$tag.json" > "$OUT/replay-$tag.log" 2>&1
    echo "== $tag ${3:-} (exit $?)"; grep -E '^(gphash|cpu-assisted|  [a-z]+ +gphash)' "$OUT/replay-$tag.log"
}
for t in dlrm pr; do
    replay "$t" "$t"
    [[ "${AHEAD:-0}" == 1 ]] && replay "$t-noahead" "$t" -Dgphash.gpuTuning=growHeapAhead=false
done
rm -rf "$T"
