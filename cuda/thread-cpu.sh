#!/usr/bin/env bash
# Samples every thread's CPU time of the newest process whose command line holds $2 (default
# org.gphash.bench), twice a second, until it ends: lines "MILLISECONDS TID NAME UTIME STIME" (CPU
# time in clock ticks) into $1, for a look at which threads used the cores while a bench ran
# (issue 57: a backend's own threads beside its callers').
set -u
out=$1; : > "$out"
start=$(( $(date +%s%N) / 1000000 ))
pid=""
for _ in $(seq 1 200); do
    pid=$(pgrep -n -f "${2:-org.gphash.bench}") && [[ -n "$pid" ]] && break
    sleep 0.1
done
[[ -z "$pid" ]] && exit 0
while [[ -d /proc/$pid ]]; do
    now=$(( $(date +%s%N) / 1000000 - start ))
    for t in /proc/$pid/task/*; do
        [[ -r $t/stat ]] || continue
        # comm may hold spaces: the fields after its closing parenthesis are fixed
        read -r line < $t/stat 2>/dev/null || continue
        name=${line#*(}; name=${name%)*}; rest=${line##*) }
        read -ra f <<< "$rest"
        echo "$now ${t##*/} ${name// /_} ${f[11]} ${f[12]}"
    done >> "$out"
    sleep 0.5
done
