#!/usr/bin/env bash
# Summarises a flight recording for a device call's output: the hottest top frames, the project's
# methods by inclusive share of samples, and the waits (parks, monitor entries, sleeps) by site with
# the time summed over threads (org.gphash.bench.JfrSummary, which formats frames itself: the jfr
# tool's views and its print of stacks fail on JDK 25 for some frames, "Range [1, -1) out of bounds",
# which emptied these summaries); then the tool's views that do not print frames.
#   bench-ycsb/jfr-summary.sh recording.jfr     (RUN: the bundle's launcher; JFR: its jfr tool)
set -uo pipefail
rec=$1
run=${RUN:-/tmp/bundle/bin/run}
jfr=${JFR:-/tmp/bundle/jre/bin/jfr}
"$run" org.gphash.bench.JfrSummary "$rec" 5
for view in latencies-by-type gc-pauses; do
    echo "== jfr view $view"
    "$jfr" view --width 200 "$view" "$rec" 2>&1 | head -30
done
