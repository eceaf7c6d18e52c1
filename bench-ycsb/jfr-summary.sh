#!/usr/bin/env bash
# Summarises a flight recording for a device call's output (the bundle's jfr tool): the hottest top
# frames, the project's methods by inclusive share of samples (each method counted once per sample),
# and where threads ran native code (samples), parked or waited on a monitor (first project frame, by count).
#   bench-ycsb/jfr-summary.sh recording.jfr [jfr tool]
set -uo pipefail
rec=$1
jfr=${2:-/tmp/bundle/jre/bin/jfr}
# The tool's own views first: its print of stacks fails on some frames (JDK 25: "Range [1, -1) out of
# bounds" in PrettyWriter.formatMethod), which empties the stack summaries below.
for view in hot-methods native-methods contention-by-site latencies-by-type gc-pauses; do
    echo "== jfr view $view"
    "$jfr" view --width 200 "$view" "$rec" 2>&1 | head -30
done
"$jfr" print --events jdk.ExecutionSample "$rec" | awk '
    /stackTrace = \[/ {inside = 1; depth = 0; delete seen; n++; next}
    inside && /^[ \t]*\]/ {inside = 0; next}
    inside {
        f = $0; sub(/^[ \t]+/, "", f); sub(/[ \t]+line:.*/, "", f)
        if (depth++ == 0) top[f]++
        if (f ~ /gphash/ && !(f in seen)) {seen[f] = 1; incl[f]++}
    }
    END {
        print "== top frames (" n " samples)"
        for (f in top) printf "%6.2f%% %s\n", 100 * top[f] / n, f | "sort -rn | head -25"
        close("sort -rn | head -25")
        print "== gphash methods, inclusive"
        for (f in incl) printf "%6.2f%% %s\n", 100 * incl[f] / n, f | "sort -rn | head -40"
        close("sort -rn | head -40")
    }'
for ev in jdk.NativeMethodSample jdk.ThreadPark jdk.JavaMonitorEnter jdk.ThreadSleep; do
    echo "== $ev: frames of the waits (first gphash frame), by count"
    "$jfr" print --events $ev "$rec" | awk '
        /stackTrace = \[/ {inside = 1; found = 0; n++; next}
        inside && /^[ \t]*\]/ {inside = 0; next}
        inside && !found && /gphash/ {f = $0; sub(/^[ \t]+/, "", f); sub(/[ \t]+line:.*/, "", f); w[f]++; found = 1}
        END {for (f in w) printf "%7d %s\n", w[f], f | "sort -rn | head -12"; close("sort -rn | head -12"); print "  (" n " events)"}'
done
