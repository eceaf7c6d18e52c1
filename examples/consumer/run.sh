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
# The same jars on the module path, as automatic modules (each jar names its module in its manifest):
# this fails if two jars split a package or a jar's module name is missing.
"$JAVA_HOME/bin/java" --enable-native-access=org.gphash,org.gphash.natives,org.gphash.persistence,ALL-UNNAMED \
    --module-path "$(cat "$here/target/classpath.txt")" --add-modules org.gphash -cp "$here/target/classes" example.Main
