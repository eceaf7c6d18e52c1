#!/usr/bin/env bash
# Issue 25 on the GPU machine (no Java there: runs from the bundle cuda/make-device-bundle.sh makes).
# The bench client's ceiling and the engines' batches from 16 threads, `bench ycsb` as a user runs it,
# with this commit's client and, where OLD names a folder of an earlier commit's jars (index, demo,
# bench-ycsb: they shadow the bundle's), with that client in the same run; then the host batches'
# stage profile beside the device-resident figures (GpuTargetsBench). Logs under $OUT.
#   bench-ycsb/device-host-path.sh bench [BATCHES]   # default 262144 65536
#   bench-ycsb/device-host-path.sh targets           # GpuTargetsBench --parts targets (ROUNDS=N with OLD)
#   bench-ycsb/device-host-path.sh gpu [BATCH]       # the GPU engine only, coalescer on and off, new and
#                                                    # OLD alternating (ROUNDS=N), default batch 262144
#   bench-ycsb/device-host-path.sh cpu [BATCHES]     # the CPU engine beside ConcurrentHashMap, new and OLD
#                                                    # (JFR=1: a flight recording, $OUT/cpu-BATCH.jfr)
#   bench-ycsb/device-host-path.sh load [JVM OPTIONS] # 16M keys from fresh host batches beside the insert
# KEYS, OPS, THREADS and WARMUP (bench ycsb --warmup, default 100k: raised to two batches a thread) set the bench.
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
bash cuda/device-unpack.sh || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
java=(/tmp/bundle/jre/bin/java --enable-native-access=ALL-UNNAMED -Xmx48g
      --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED)
new="/tmp/bundle/lib/*"
# The earlier build's classpath: its gphash jars and the bundle's other jars, never this build's
# gphash jars beside them (a class that moved package would be found twice, or a provider of each build).
old="/tmp/bundle/lib/*"
if [[ -n "${OLD:-}" ]]; then
    old="$PWD/$OLD/*:$(ls /tmp/bundle/lib/*.jar | grep -v '/gphash-' | paste -sd:)"
fi
keys="${KEYS:-4m}"; ops="${OPS:-8m}"; threads="${THREADS:-16}"; warmup="${WARMUP:-100k}"
run_bench() {  # TAG CLASSPATH [JVM OPTIONS] -- ARGS...
    local tag=$1 cp=$2; shift 2
    local jvm=()
    while [[ $# -gt 0 && "$1" != "--" ]]; do jvm+=("$1"); shift; done
    shift
    echo "== $tag: ${jvm[*]} $*" | tee -a "$OUT/summary.txt"
    "${java[@]}" "${jvm[@]}" -cp "$cp" org.gphash.bench.YcsbBench --threads "$threads" --keys "$keys" --ops "$ops" \
        --workloads load,c,a --warmup "$warmup" --no-progress "$@" > "$OUT/$tag.log" 2>&1
    grep -E "^(gphash|chm|cpu-assisted)" "$OUT/$tag.log" | tee -a "$OUT/summary.txt"
}
# Calls "$@" once per build and round: with OLD, both builds, ROUNDS=N times (default 1), the old one
# first in every other round (a JVM's place in the call can move a figure); $which, $cp and $round say
# which.
each_build() {
    local order
    for ((round = 1; round <= ${ROUNDS:-1}; round++)); do
        order=(new old)
        (( round % 2 == 0 )) && order=(old new)
        for which in "${order[@]}"; do
            [[ "$which" == old && -z "${OLD:-}" ]] && continue
            cp="$new"; [[ "$which" == old ]] && cp="$old"
            "$@"
        done
    done
}
gpu_both_ways() {  # BATCH: the GPU engine with the coalescer and without it
    run_bench "gpu-$which-$round" "$cp" -- --batch "$1" --backend gpu --baselines none
    run_bench "gpu-uncoalesced-$which-$round" "$cp" -Dgphash.bench.coalescing=off -- --batch "$1" --backend gpu --baselines none
}
targets_once() {  # [GpuTargetsBench options]
    echo "== round $round: $which jars" | tee -a "$OUT/summary.txt"
    "${java[@]}" -cp "$cp" org.gphash.bench.gpu.GpuTargetsBench --parts targets "$@" > "$OUT/targets-$which-$round.log" 2>&1
    grep -E "^\| (host|positive|negative|update|insert|delete|YCSB)|load of" "$OUT/targets-$which-$round.log" \
        | cut -c1-220 | tee -a "$OUT/summary.txt"
}
cpu_once() {  # BATCH: the CPU engine beside ConcurrentHashMap; JFR=1: a flight recording of the new build's first round
    local jfr=(-Dno.recording=1)
    [[ -n "${JFR:-}" && "$which" == new && "$round" == 1 ]] \
        && jfr=(-XX:StartFlightRecording:filename="$OUT/cpu-$1.jfr",settings=profile,jdk.ThreadPark#threshold=1ms)
    run_bench "cpu-$which-$round-$1" "$cp" "${jfr[@]}" -- --batch "$1" --backend cpu --baselines chm
}
load_once() {  # [JVM OPTIONS]: GpuTargetsBench --parts load (16M keys from fresh host batches, beside the insert)
    echo "== round $round: $which jars $*" | tee -a "$OUT/summary.txt"
    "${java[@]}" "$@" -cp "$cp" org.gphash.bench.gpu.GpuTargetsBench --parts load > "$OUT/load-$which-$round.log" 2>&1
    grep -E "^load of" "$OUT/load-$which-$round.log" | cut -c1-400 | tee -a "$OUT/summary.txt"
}
what="${1:-bench}"; shift || true
case "$what" in
    bench)
        for b in ${*:-262144 65536}; do
            run_bench "cpu-new-$b" "$new" -- --batch "$b" --backend cpu --baselines chm,client
            [[ -n "${OLD:-}" ]] && run_bench "cpu-old-$b" "$old" -- --batch "$b" --backend cpu --baselines chm
            run_bench "gpu-new-$b" "$new" -- --batch "$b" --backend gpu --baselines none
            run_bench "gpu-uncoalesced-new-$b" "$new" -Dgphash.bench.coalescing=off -- --batch "$b" --backend gpu --baselines none
            [[ -n "${OLD:-}" ]] && run_bench "gpu-old-$b" "$old" -- --batch "$b" --backend gpu --baselines none
        done ;;
    gpu) each_build gpu_both_ways "${1:-262144}" ;;
    cpu) for b in ${*:-262144}; do each_build cpu_once "$b"; done ;;
    load) each_build load_once "$@" ;;
    targets) each_build targets_once "$@" ;;
    *) echo "usage: $0 bench [BATCHES] | gpu [BATCH] | targets | cpu [BATCHES] | load [JVM OPTIONS]" >&2; exit 2 ;;
esac
echo; echo "== summary"; cat "$OUT/summary.txt" 2>/dev/null
