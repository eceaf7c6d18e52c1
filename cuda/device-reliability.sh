#!/usr/bin/env bash
# Multi-threaded power-fail crash rounds on the device machine's many cores (issue 52), from a bundle
# made by cuda/make-device-bundle.sh: RUNS crashtest runs at once, CPU engine, three writer threads,
# batches of 64, pools in /dev/shm, each starting no round after MINUTES; optionally the GPU tests
# named in GPU_TESTS (or all of them: GPU_TESTS=all) beside them. Logs under $OUT; prints each run's summary line last.
#   cuda/device-reliability.sh RUNS MINUTES DURABILITY FIRST_SEED
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
runs="${1:-8}"; minutes="${2:-8}"; durability="${3:-PER_OPERATION}"; seed0="${4:-70}"
bash cuda/device-unpack.sh || exit 1
nproc > "$OUT/cores.txt"
if [[ -n "${GPU_TESTS:-}" ]]; then
    [[ "$GPU_TESTS" == all ]] && GPU_TESTS=""   # every GPU test class
    # shellcheck disable=SC2086
    (GPHASH_TEST_TAIL=25 bash cuda/device-check.sh tests $GPU_TESTS > "$OUT/gpu-tests-tail.log" 2>&1; echo "exit $?" >> "$OUT/gpu-tests-tail.log") &
fi
pids=()
for ((i = 0; i < runs; i++)); do
    s=$((seed0 + i))
    JAVA_OPTS="-Xmx1g" /tmp/bundle/bin/run org.gphash.crashtest.CrashTest --max-kill-ms 1000 --power-fail --threads 3 \
        --batch 64 --keys 6000 --rounds 100000 --minutes "$minutes" --seed "$s" --durability "$durability" \
        "/dev/shm/rel-$s.pool" > "$OUT/crash-$s.log" 2>&1 &
    pids+=($!)
done
for p in "${pids[@]}"; do wait "$p"; done
wait
[[ -n "${GPU_TESTS:-}" ]] && tail -25 "$OUT/gpu-tests-tail.log"
ls /dev/shm | grep -c refused | sed 's/^/refused pools kept: /'
for ((i = 0; i < runs; i++)); do s=$((seed0 + i)); grep -h "kills landed\|^crashtest: backend=.*lost=" "$OUT/crash-$s.log" | tail -2; done
