#!/usr/bin/env bash
# Compiles the CUDA kernels into one fatbin (sm_90 code for H100/H200 plus compute_90 PTX that
# newer GPUs JIT-compile), placed among the classes so it ships in the jar and is loaded with
# cuModuleLoadData. Called by Maven (cuda/pom.xml) during process-resources.
#   build-kernels.sh SRC_DIR OUT_FATBIN SKIP [REQUIRE]
# SKIP true: build without kernels. REQUIRE true (-Dgphash.requireKernels=true): a missing nvcc fails
# the build. Otherwise a machine without nvcc builds everything but the kernels and says so in one
# line: the CPU engine is what such machines run, and the GPU backend then reports "built without
# GPU kernels".
set -euo pipefail
src="$1"; out="$2"; skip="${3:-false}"; require="${4:-false}"
if [[ "$skip" == "true" ]]; then
    echo "gphash-cuda: -Dgphash.skipKernels=true: building without GPU kernels (the GPU backend will be unavailable)"
    rm -f "$out"
    exit 0
fi
# nvcc on PATH, or NVCC=/path/to/nvcc (not looked for elsewhere, so hiding it from PATH builds without kernels).
NVCC="${NVCC:-$(command -v nvcc || true)}"
if [[ -z "$NVCC" ]]; then
    if [[ "$require" == "true" ]]; then
        echo "gphash-cuda: nvcc not found, and -Dgphash.requireKernels=true: the GPU kernels are compiled by the" >&2
        echo "  CUDA toolkit's nvcc (12.x or 13.x); install it and put nvcc on PATH (or set NVCC=/path/to/nvcc)" >&2
        exit 1
    fi
    echo "gphash-cuda: nvcc not found: building without GPU kernels (the CPU engine is complete; install the CUDA toolkit for the GPU backend)"
    rm -f "$out"
    exit 0
fi
mkdir -p "$(dirname "$out")"
# Rebuild only when a source is newer than the fatbin.
if [[ -f "$out" ]] && [[ -z "$(find "$src" -newer "$out" -type f -print -quit)" ]]; then
    exit 0
fi
"$NVCC" -std=c++17 -O3 -fatbin -Xptxas -warn-spills \
    -gencode arch=compute_90,code=sm_90 -gencode arch=compute_90,code=compute_90 \
    -I "$src" -o "$out" "$src/gphash_kernels.cu"
echo "gphash-cuda: built $(basename "$out") ($(stat -c %s "$out") bytes) with $("$NVCC" --version | tail -1)"
