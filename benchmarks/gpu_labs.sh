#!/usr/bin/env bash
# The kernel labs (issue 13) on a GPU, in one call, from the repository root:
#   1. the lab tests that run on a GPU backend (the GPU path of a check, the fragment lab);
#   2. every lab's check with the reference kernels of solutions/: the kernel's cell in a fresh
#      worker on the simulator (gemmlab.judging.worker: compiled for sm_75 and sm_90 by NVVM,
#      then the instrumented checks), then each kernel timed at 4096^3 beside the course's
#      kernel and cuBLAS -> benchmarks/gpu_labs.json (machine, versions, date) and a Markdown table.
# Needs greenlet and NVVM (the GPU's CUDA toolkit or NVIDIA's wheels; ptxas too, for the
# registers and spills of lessons 10 and 11) on the GPU machine (offline machines:
# `bash ../shared/device/gpu-wheels.sh greenlet` beforehand).
# About 3-5 minutes on an H200. Logs go to benchmarks/gpu_labs.log. PYTHON selects the interpreter.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
OUT=${OUT:-benchmarks}
LOG="$OUT/gpu_labs.log"
export GEMMLAB_BACKEND=gpu
status=0
: > "$LOG"

echo "=== 1. lab tests on the gpu backend ($(date -u +%H:%M:%S))" | tee -a "$LOG"
$PY -m pytest -q -rs -o addopts="" -p no:cacheprovider tests/test_labs_gpu.py tests/test_labs_wmma.py \
  2>&1 | tee -a "$LOG" | tail -5
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "=== 2. every lab with its reference kernel ($(date -u +%H:%M:%S))" | tee -a "$LOG"
$PY benchmarks/gpu_labs.py --out "$OUT/gpu_labs.json" 2>&1 | tee -a "$LOG"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "=== done, status $status" | tee -a "$LOG"
exit $status
