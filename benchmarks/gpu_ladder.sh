#!/usr/bin/env bash
# The GPU run of the kernel ladder, in one call, from the repository root on a machine with an
# NVIDIA GPU (made for the H200; about 6-8 minutes there):
#   1. correctness: tests/test_kernels.py, test_kernels_launch.py, test_bench.py, test_measure.py
#      with GEMMLAB_BACKEND=gpu (GPU tiles, shapes up to 4096^3 from gl.device.sizes());
#   2. the ladder benchmark at 1024/2048/4096 and two non-square shapes -> benchmarks/gpu_ladder.json
#   3. a tile sweep of the register-blocked rungs at 4096^3 -> benchmarks/gpu_tiles.json
#   4. compute-sanitizer memcheck and racecheck on every rung at a small odd shape.
# Logs go to benchmarks/gpu_ladder.log. PYTHON selects the interpreter (default: python).
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
OUT=${OUT:-benchmarks}
LOG="$OUT/gpu_ladder.log"
export GEMMLAB_BACKEND=gpu
status=0
step() { echo; echo "=== $1 ($(date -u +%H:%M:%S))" | tee -a "$LOG"; }
: > "$LOG"

step "1. correctness at full size"
$PY -m pytest -n 4 --dist loadfile -q -p no:cacheprovider tests/test_kernels.py \
  tests/test_kernels_launch.py tests/test_bench.py tests/test_measure.py \
  2>&1 | tee -a "$LOG" | tail -5 || status=1

step "2. ladder benchmark"
$PY -m gemmlab.cli bench --sizes 1024,2048,4096 --shapes 4096x11008x4096 1024x8192x2048 \
  --out "$OUT/gpu_ladder.json" 2>&1 | tee -a "$LOG" || status=1

step "3. tile sweep at 4096"
$PY -m gemmlab.cli bench --sizes 4096 --quiet --out "$OUT/gpu_tiles.json" --kernels \
  tiled:T=16 tiled:T=32 \
  outer:BM=128,BN=128,BK=8,TM=8,TN=8 outer:BM=128,BN=128,BK=16,TM=8,TN=8 \
  pingpong:BM=128,BN=128,BK=8,TM=8,TN=8 pingpong:BM=128,BN=128,BK=16,TM=8,TN=8 \
  twolevel:BM=128,BN=128,BK=8,TM=8,TN=8 twolevel:BM=128,BN=128,BK=16,TM=8,TN=8 \
  outer:BM=128,BN=64,BK=8,TM=8,TN=8 pingpong:BM=128,BN=64,BK=8,TM=8,TN=8 \
  twolevel:BM=128,BN=64,BK=8,TM=8,TN=8 twolevel:BM=128,BN=64,BK=16,TM=8,TN=8 \
  2>&1 | tee -a "$LOG" || status=1

SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
PROGRAM='
import numpy as np, gemmlab as gl
rng = np.random.default_rng(0)
M, N, K = 161, 133, 75          # two block rows/columns with ragged edges, K not a multiple of BK
A = rng.standard_normal((M, K), dtype=np.float32)
B = rng.standard_normal((K, N), dtype=np.float32)
C = rng.standard_normal((M, N), dtype=np.float32)
ref = 1.5 * A.astype(np.float64) @ B - 0.5 * C
for name in gl.kernels.names():
    out = gl.gemm(A, B, C, alpha=1.5, beta=-0.5, kernel=name)
    err = np.abs(out - ref).max()
    assert err < 1e-3, (name, err)
    print(name, "ok", err)
'
for tool in memcheck racecheck; do
  step "4. compute-sanitizer --tool $tool"
  if [ -x "$SANITIZER" ]; then
    # --report-api-errors no: cuda-bindings probes cuGetProcAddress for symbols this driver lacks;
    # those host-side lookups are not kernel errors and would drown the device-side report.
    "$SANITIZER" --tool "$tool" --report-api-errors no --error-exitcode 3 $PY -c "$PROGRAM" 2>&1 | tee -a "$LOG" | tail -8 \
      || status=1
  else
    echo "compute-sanitizer not found; skipped" | tee -a "$LOG"; status=1
  fi
done

step "done, status $status"
exit $status
