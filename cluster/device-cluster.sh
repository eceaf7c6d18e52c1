#!/usr/bin/env bash
# On the device machine (no Java; a bundle from cuda/make-device-bundle.sh): the GPU test suite, then
# gphash bench cluster for each node count given. Logs under $OUT.
#   cluster/device-cluster.sh [NODES...]        (CLUSTER_OPTS: more options, e.g. --backend gpu; SKIP_TESTS=1)
set -u
export OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
echo "cores: $(nproc)"
if [[ "${SKIP_TESTS:-}" != 1 ]]; then
    bash cuda/device-check.sh tests > "$OUT/tests-summary.txt" 2>&1; echo "GPU tests rc=$?"
    grep -E "tests (successful|failed|aborted|skipped|found)|containers failed" "$OUT/tests-summary.txt"
fi
for n in "${@:-2}"; do
    GPHASH_JAVA_EXTRA="-Xmx24g" timeout 400 bash cuda/device-check.sh main org.gphash.bench.cluster.ClusterBench \
        --nodes "$n" --keys 4194304 --seconds 4 --node-heap 12g ${CLUSTER_OPTS:-} > "$OUT/cluster-$n${TAG:-}.txt" 2>&1
    echo "bench cluster --nodes $n rc=$?"
    grep -v "^WARNING" "$OUT/cluster-$n${TAG:-}.txt" | tail -7
done
