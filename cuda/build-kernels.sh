#!/usr/bin/env bash
# Compiles the CUDA kernels into one fatbin (sm_90 code for H100/H200 plus compute_90 PTX that
# newer GPUs JIT-compile), placed among the classes so it ships in the jar and is loaded with
# cuModuleLoadData. Called by Maven (cuda/pom.xml) during process-resources.
#   build-kernels.sh SRC_DIR OUT_FATBIN SKIP
set -euo pipefail
src="$1"; out="$2"; skip="${3:-false}"
if [[ "$skip" == "true" ]]; then
    echo "gphash-cuda: -Dgphash.skipKernels=true: building without kernels (the GPU engine will be unavailable)"
    rm -f "$out"
    exit 0
fi
NVCC="${NVCC:-$(command -v nvcc || true)}"
if [[ -z "$NVCC" && -x /usr/local/cuda/bin/nvcc ]]; then NVCC=/usr/local/cuda/bin/nvcc; fi
if [[ -z "$NVCC" ]]; then
    echo "gphash-cuda: nvcc not found: the GPU kernels are compiled by the CUDA toolkit's nvcc (12.x or 13.x)." >&2
    echo "  Install the CUDA toolkit and put nvcc on PATH (or set NVCC=/path/to/nvcc)," >&2
    echo "  or build without the GPU engine: mvn -Dgphash.skipKernels=true ..." >&2
    exit 1
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
