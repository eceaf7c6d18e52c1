#!/usr/bin/env bash
# Runs the GPU tests and the GPU micro benchmark on a machine with a GPU but no Java (the device
# machine), from a bundle made here by cuda/make-device-bundle.sh. Logs go to $OUT (or ./device-out).
#   cuda/device-check.sh tests [CLASS..]  # every GPU test (JUnit console), or the classes named
#   cuda/device-check.sh bench ARGS...    # org.gphash.bench.gpu.GpuMicroBench ARGS
#   cuda/device-check.sh main CLASS ARGS  # any main class, e.g. org.gphash.bench.YcsbBench
# GPHASH_JAVA_EXTRA adds JVM options to bench and main (e.g. -Dgphash.gpuTuning=logBatches=true).
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
bash cuda/device-unpack.sh || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
what="${1:-tests}"; shift || true
case "$what" in
    tests)
        # Every GPU test class, or the ones named (simple names): cuda/device-check.sh tests MirrorPathTest ...
        # GPHASH_TEST_OPTS passes JVM options, e.g. -Dgphash.indexMirror=OFF to run the suite on the pool path.
        # GPHASH_JUNIT_DIR: where JUnit's XML reports go (default $OUT/junit; the device tool brings back 8 files).
        if [[ $# -gt 0 ]]; then classes=("$@"); else mapfile -t classes < .device-bundle/test-classes.txt; fi
        selects=()
        for c in "${classes[@]}"; do [[ "$c" == *.* ]] || c="org.gphash.cuda.$c"; selects+=(--select-class "$c"); done
        JAVA_OPTS="-Xmx16g ${GPHASH_TEST_OPTS:-}" /tmp/bundle/bin/run org.junit.platform.console.ConsoleLauncher execute \
            "${selects[@]}" --details=tree --disable-banner \
            --reports-dir "${GPHASH_JUNIT_DIR:-$OUT/junit}${GPHASH_TEST_TAG:-}" 2>&1 | tee "$OUT/tests${GPHASH_TEST_TAG:-}.log" | tail -${GPHASH_TEST_TAIL:-60}
        exit "${PIPESTATUS[0]}" ;;
    bench)
        JAVA_OPTS="-Xmx48g ${GPHASH_JAVA_EXTRA:-}" /tmp/bundle/bin/run org.gphash.bench.gpu.GpuMicroBench "$@" 2>&1 | tee -a "$OUT/bench.log"
        exit "${PIPESTATUS[0]}" ;;
    main)
        # any main class of the bundle, e.g. org.gphash.bench.YcsbBench (./gphash bench ycsb) or
        # org.gphash.bench.Replay; lmdbjava needs the opens the launcher passes
        JAVA_OPTS="-Xmx48g ${GPHASH_JAVA_EXTRA:-} --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED" \
            /tmp/bundle/bin/run "$@" 2>&1 | tee -a "$OUT/main.log"
        exit "${PIPESTATUS[0]}" ;;
    *) echo "usage: $0 tests|bench [args]|main CLASS [args]" >&2; exit 2 ;;
esac
