#!/usr/bin/env bash
# Packs a Java runtime, the project's jars, the GPU tests and the JUnit console into
# .device-bundle/bundle.tar.xz for the device machine (no Java there). Run ./gphash build first.
set -euo pipefail
cd "$(dirname "$0")/.."
# A bundle without kernels would skip every GPU test and look like a pass.
jar="$(ls cuda/target/gphash-cuda-*.jar 2>/dev/null | grep -v -e tests -e sources -e javadoc | head -n1)"
if [[ -z "$jar" ]] || ! "$JAVA_HOME/bin/jar" tf "$jar" | grep -q 'gphash.fatbin$'; then
    echo "make-device-bundle: the gphash-cuda jar has no GPU kernels (built without nvcc?): run ./gphash build on a machine with nvcc" >&2
    exit 1
fi
tests=target/device-tests
rm -rf "$tests" && mkdir -p "$tests" .device-bundle
"$JAVA_HOME/bin/jar" cf "$tests/gphash-cuda-tests.jar" -C cuda/target/test-classes .
# The index's and the front end's test classes too: CoalescedGpuKillTest runs the front end's
# CoalescedKillTest on the GPU backend, over the index's test helpers.
"$JAVA_HOME/bin/jar" cf "$tests/gphash-index-tests.jar" -C index/target/test-classes .
"$JAVA_HOME/bin/jar" cf "$tests/gphash-frontend-tests.jar" -C frontend/target/test-classes .
console="$HOME/.m2/repository/org/junit/platform/junit-platform-console-standalone/1.11.4/junit-platform-console-standalone-1.11.4.jar"
[[ -f "$console" ]] || mvn -B -ntp -q dependency:get -Dartifact=org.junit.platform:junit-platform-console-standalone:1.11.4
jars=()
for m in native persistence bktcache api index journal frontend cluster recovery cuda cli examples/demo bench-ycsb crashtest; do jars+=("$m/target"); done
# The bundle's runtime has no zip file system, so JUnit cannot scan jars: name the test classes.
# Property tests (jqwik) check host-side logic and run in CI; the bundle carries the GPU tests and JUnit only.
(cd cuda/target/test-classes && for f in $(find . -name '*Test.class'); do
    grep -q 'net/jqwik' "$f" || echo "$f"; done | sed 's|^\./||; s|\.class$||; s|/|.|g') > .device-bundle/test-classes.txt
../shared/tools/device-bundle .device-bundle "${jars[@]}" target/lib "$tests" "$console"
# The shared tool's runtime has no jdk.jfr: swap in one that has it, so that a device call can
# record a flight recording (-XX:StartFlightRecording) and bring the .jfr back to read here.
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
tar xJf .device-bundle/bundle.tar.xz -C "$tmp"
rm -rf "$tmp/bundle/jre"
# LEAN=1: without the cluster's Hazelcast and YCSB's PDF libraries (24 MB), which a device call's
# working tree and carry must fit under 64 MiB beside; the cluster's tests then cannot run there.
[[ "${LEAN:-0}" == 1 ]] && rm -f "$tmp"/bundle/lib/{hazelcast,pdfbox,fontbox}-*.jar
# java.sql, java.naming, jdk.management: what Hazelcast (the cluster's nodes and clients) uses beyond the rest.
"$JAVA_HOME/bin/jlink" --add-modules java.base,java.logging,java.management,jdk.unsupported,java.xml,jdk.jfr,java.sql,java.naming,jdk.management \
    --compress=zip-6 --strip-debug --no-header-files --no-man-pages --output "$tmp/bundle/jre"
tar -C "$tmp" -cJf .device-bundle/bundle.tar.xz bundle
echo "make-device-bundle: runtime with jdk.jfr, $(du -h .device-bundle/bundle.tar.xz | cut -f1)"
