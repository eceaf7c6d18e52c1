#!/usr/bin/env bash
# Installs gphash into the local Maven repository, then builds and runs examples/consumer, a project
# apart from the gphash build that depends only on the published coordinates
# (org.gphash:gphash-index), with no JVM flag but --enable-native-access, then again with the gphash
# jars on the module path. Used by .ci/run.
#   examples/consumer/run.sh            (JAVA_HOME: a JDK >= 22; extra Maven options in MVN_OPTS)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
here="$root/examples/consumer"
# The launcher's JDK search (JAVA_HOME if >= 22, else the newest under /usr/lib/jvm).
# shellcheck source=../../gphash
source "$root/gphash"
find_jdk
mvn -B -q -f "$root/pom.xml" -DskipTests ${MVN_OPTS:-} install
mvn -B -q -f "$here/pom.xml" ${MVN_OPTS:-} package dependency:build-classpath -Dmdep.outputFile="$here/target/classpath.txt"
"$JAVA_HOME/bin/java" --enable-native-access=ALL-UNNAMED \
    -cp "$here/target/classes:$(cat "$here/target/classpath.txt")" example.Main
# The same jars on the module path: org.gphash (the API), org.gphash.index (the CPU engine, found by
# service binding) and the modules below them have descriptors (module-info), which must resolve
# (explicit requires, no split package) and export the API.
for m in org.gphash org.gphash.index org.gphash.persistence org.gphash.natives; do
    if "$JAVA_HOME/bin/java" --module-path "$(cat "$here/target/classpath.txt")" --describe-module "$m" | grep -q automatic; then
        echo "examples/consumer/run.sh: $m is an automatic module: its module-info is missing from the jar" >&2
        exit 1
    fi
done
"$JAVA_HOME/bin/java" --enable-native-access=org.gphash,org.gphash.index,org.gphash.natives,org.gphash.persistence,ALL-UNNAMED \
    --module-path "$(cat "$here/target/classpath.txt")" --add-modules org.gphash -cp "$here/target/classes" example.Main
