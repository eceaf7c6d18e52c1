#!/usr/bin/env bash
# Issue 27: the clean open of a 16M-key pool on both engines (OpenTime's clean mode: open, a first
# and a second read of 1M keys, close), with this commit's jars and, where OLD names a folder of an
# earlier commit's engine jars (native, persistence, index, bktcache, cuda), with those too, in the
# same call on the same machine. Runs on the device machine from the bundle cuda/make-device-bundle.sh
# makes; logs go to $OUT.
#   OLD=.device-old bench-ycsb/device-open-time.sh      # ITEMS (default 16777216), REPEATS (default 5)
set -uo pipefail
OUT="${OUT:-$PWD/device-out}"
mkdir -p "$OUT"
bash cuda/device-unpack.sh || exit 1
ITEMS="${ITEMS:-16777216}"
REPEATS="${REPEATS:-5}"
java=(/tmp/bundle/jre/bin/java --enable-native-access=ALL-UNNAMED -Xmx48g)
run() {
    "${java[@]}" -cp "$2" org.gphash.bench.OpenTime "$ITEMS" "$REPEATS" /dev/shm cpu,gpu > "$OUT/open-$1.log" 2>&1
    echo "== $1 jars"
    grep -A5 "^clean open time" "$OUT/open-$1.log" || tail -5 "$OUT/open-$1.log"
}
[[ -n "${OLD:-}" ]] && run old "$PWD/$OLD/*:/tmp/bundle/lib/*"
run new "/tmp/bundle/lib/*"
