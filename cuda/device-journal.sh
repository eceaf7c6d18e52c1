#!/usr/bin/env bash
# The journal's device run (issue 51), from a bundle made by cuda/make-device-bundle.sh: the disk's own
# figures (dd), JournalBench on the GPU engine (pool on /dev/shm, journal on the root disk), and
# crash rounds of the GPU engine with a journal (real SIGKILLs, then the pool deleted and the journal
# cut to what was flushed). Logs under $OUT; a table last.
#   cuda/device-journal.sh [KEYS] [CRASH_ROUNDS] [SEED]
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
keys="${1:-16777216}"
rounds="${2:-50}"
bash cuda/device-unpack.sh || exit 1
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader | tee "$OUT/gpu.txt"
disk=/var/tmp/gphash-journal
rm -rf "$disk"; mkdir -p "$disk"; chmod 700 "$disk"
df -hT "$disk" | tee "$OUT/disk.txt"
{
    echo "sequential direct writes, 16 MiB x 128:"; dd if=/dev/zero of="$disk/dd" bs=16M count=128 oflag=direct 2>&1 | tail -1
    echo "4 KiB writes each synced x 2000:"; dd if=/dev/zero of="$disk/dd" bs=4k count=2000 oflag=dsync 2>&1 | tail -1
    echo "1 MiB writes each synced x 512:"; dd if=/dev/zero of="$disk/dd" bs=1M count=512 oflag=dsync 2>&1 | tail -1
} | tee -a "$OUT/disk.txt"
rm -f "$disk/dd"
JAVA_OPTS="-Xmx48g --add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED" /tmp/bundle/bin/run org.gphash.bench.journal.JournalBench --backend gpu --keys "$keys" \
    --pool-dir /dev/shm --disk-dir "$disk/bench" 2>&1 | tee "$OUT/bench.log"
bench=${PIPESTATUS[0]}
if (( rounds > 0 )); then
    JAVA_OPTS="-Xmx4g" timeout 240 /tmp/bundle/bin/run org.gphash.crashtest.CrashTest --backend gpu --journal "$disk/crash" \
        --power-fail --rounds "$rounds" --batch 64 --threads 2 --keys 6000 --seed "${3:-51}" /dev/shm/crash.pool 2>&1 | tee "$OUT/crash.log" | tail -12
fi
echo "== disk"; cat "$OUT/disk.txt"
echo "== bench exit $bench"; grep '^|' "$OUT/bench.log"
