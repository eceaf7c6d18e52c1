#!/usr/bin/env bash
# Unpacks the device bundle (.device-bundle/bundle.tar.xz, cuda/make-device-bundle.sh) into /tmp/bundle
# on the GPU machine, again whenever the bundle differs from the one unpacked there: a machine kept warm
# between calls still holds the last call's /tmp/bundle, which would otherwise run an older build.
set -euo pipefail
sum=$(cksum < .device-bundle/bundle.tar.xz)
if [[ ! -x /tmp/bundle/bin/run || "$(cat /tmp/bundle/.bundle-sum 2>/dev/null)" != "$sum" ]]; then
    rm -rf /tmp/bundle
    tar xJf .device-bundle/bundle.tar.xz -C /tmp
    echo "$sum" > /tmp/bundle/.bundle-sum
fi
# OLD=DIR: an earlier build's gphash jars over a copy of the bundle, at /tmp/bundle-old, for a baseline
# in the same call (the device scripts' OLD options).
if [[ -n "${OLD:-}" ]]; then
    rm -rf /tmp/bundle-old && cp -r /tmp/bundle /tmp/bundle-old && cp "$OLD"/gphash-*.jar /tmp/bundle-old/lib/
fi
