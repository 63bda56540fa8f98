#!/usr/bin/env bash
# The GPU run of the kernel ladder, in one call, from the repository root on a machine with an
# NVIDIA GPU (made for the H200; about 2.5 minutes there). Each step has a time limit and the
# steps run in order of importance, so a run cut short still leaves what it finished.
#   1. correctness: tests/test_kernels.py and test_kernels_unrolled.py with GEMMLAB_BACKEND=gpu
#      (GPU tiles, shapes up to 4096^3 from gl.device.sizes(), float64 reference, NaN-poisoned
#      outputs, alpha/beta; the unrolled rung's fast and checked paths, a misaligned array);
#   2. lesson 11's last step at 4096^3 and 8192^3: twolevel, then unrolled one change at a time,
#      beside cuBLAS in the same run -> $OUT/gpu_fp32.json
#   3. the ladder, every rung with its default tiles at 4096^3 -> $OUT/gpu_ladder.json
#   4. equal-tile pairs for lessons 08 and 11 at 4096^3 -> $OUT/gpu_tiles.json
#   5. compute-sanitizer memcheck and racecheck on pingpong and unrolled, at shapes where
#      unrolled takes both its fast path (inside blocks) and its checked path (edge blocks);
#   6. Nsight Compute on the kernels of step 2 at 4096^3 (issue rate, FFMA share, warps per SM,
#      stall reasons) -> $OUT/ncu_fp32.csv, summarised into $OUT/gpu_fp32.json by fp32_profile.py
# Logs go to $OUT/gpu_ladder.log. PYTHON selects the interpreter (default: python). TESTS=0,
# STEPS=0, LADDER=0, TILES=0, SANITIZE=0 or PROFILE=0 skips that step.
set -uo pipefail
cd "$(dirname "$0")/.."
PY=${PYTHON:-python}
OUT=${OUT:-benchmarks}
LOG="$OUT/gpu_ladder.log"
export GEMMLAB_BACKEND=gpu
status=0
step() { echo; echo "=== $1 ($(date -u +%H:%M:%S))" | tee -a "$LOG"; }
: > "$LOG"

want() { [ "${!1:-1}" != 0 ]; }     # a step runs unless its variable is 0

# The changes lesson 11's last step makes to twolevel, one at a time (see kernels/unrolled.py).
LAST_STEP="twolevel unrolled:BK=16,VW=1,MINB=1 unrolled:BK=8,VW=1,MINB=2 unrolled
  unrolled:BK=16,VW=4,MINB=1"

step "1. correctness at full size"
if want TESTS; then
  timeout 150 $PY -m pytest -q -p no:cacheprovider -o addopts="" tests/test_kernels_unrolled.py \
    tests/test_kernels.py 2>&1 | tee -a "$LOG" | tail -4
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

step "2. lesson 11's last step at 4096 and 8192"
if want STEPS; then
  timeout 200 $PY -m gemmlab.cli bench --sizes 4096 8192 --quiet --out "$OUT/gpu_fp32.json" \
    --kernels $LAST_STEP 2>&1 | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

step "3. ladder at 4096"
if want LADDER; then
  timeout 150 $PY -m gemmlab.cli bench --sizes 4096 --quiet --out "$OUT/gpu_ladder.json" \
    2>&1 | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

step "4. equal tiles at 4096"
if want TILES; then
  timeout 150 $PY -m gemmlab.cli bench --sizes 4096 --quiet --out "$OUT/gpu_tiles.json" --kernels \
    tiled:T=16 pingpong:T=16 \
    outer:BM=128,BN=128,BK=8,TM=8,TN=8 twolevel:BM=128,BN=128,BK=8,TM=8,TN=8 \
    outer:BM=128,BN=128,BK=16,TM=8,TN=8 twolevel:BM=128,BN=128,BK=16,TM=8,TN=8 \
    2>&1 | tee -a "$LOG"
  [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

SANITIZER=$(command -v compute-sanitizer || echo /usr/local/cuda/bin/compute-sanitizer)
PROGRAM='
import numpy as np, gemmlab as gl
rng = np.random.default_rng(0)
# 161x133x75: ragged edges, K off the tile (checked path only); 290x268x72: 2 x 2 blocks inside
# with aligned rows (unrolled reads them 4 floats at a time) and ragged edges around them.
for M, N, K in ((161, 133, 75), (290, 268, 72)):
    A = rng.standard_normal((M, K), dtype=np.float32)
    B = rng.standard_normal((K, N), dtype=np.float32)
    C = rng.standard_normal((M, N), dtype=np.float32)
    ref = 1.5 * A.astype(np.float64) @ B - 0.5 * C
    for name, tiles in (("pingpong", {}), ("unrolled", {}), ("unrolled", {"VW": 1})):
        out = gl.gemm(A, B, C, alpha=1.5, beta=-0.5, kernel=name, **tiles)
        err = np.abs(out - ref).max()
        assert err < 1e-3, (name, tiles, M, N, K, err)
        print(name, tiles, M, N, K, "ok", err)
'
for tool in memcheck racecheck; do
  step "5. compute-sanitizer --tool $tool"
  if ! want SANITIZE; then
    echo skipped | tee -a "$LOG"
  elif [ -x "$SANITIZER" ]; then
    # --report-api-errors no: cuda-bindings probes cuGetProcAddress for symbols this driver lacks;
    # those host-side lookups are not kernel errors and would drown the device-side report.
    timeout 120 "$SANITIZER" --tool "$tool" --report-api-errors no --error-exitcode 3 \
      $PY -c "$PROGRAM" 2>&1 | tee -a "$LOG" | tail -7
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
  else
    echo "compute-sanitizer not found; skipped" | tee -a "$LOG"; status=1
  fi
done

step "6. Nsight Compute on the kernels of step 2 at 4096"
NCU=$(command -v ncu || echo /usr/local/cuda/bin/ncu)
PROFILED='
import sys, numpy as np, gemmlab as gl
rng = np.random.default_rng(0)
cuda = gl.device.cuda()
n = 4096
A = cuda.to_device(rng.standard_normal((n, n), dtype=np.float32))
B = cuda.to_device(rng.standard_normal((n, n), dtype=np.float32))
for spec in sys.argv[1:]:          # one launch of each
    name, tiles = gl.bench.parse_kernel(spec)
    gl.gemm(A, B, kernel=name, **tiles)
cuda.synchronize()
'
if ! want PROFILE; then
  echo skipped | tee -a "$LOG"
elif [ -x "$NCU" ]; then
  timeout 150 "$NCU" --csv --page raw --clock-control none --kernel-name regex:'twolevel|unrolled' \
    --metrics "sm__warps_active.avg.pct_of_peak_sustained_active,smsp__issue_active.avg.per_cycle_active,smsp__inst_executed.sum,smsp__sass_thread_inst_executed_op_ffma_pred_on.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared.sum,launch__registers_per_thread,launch__occupancy_limit_registers,gpu__time_duration.sum,smsp__average_warps_issue_stalled_barrier_per_issue_active.ratio,smsp__average_warps_issue_stalled_short_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_long_scoreboard_per_issue_active.ratio,smsp__average_warps_issue_stalled_mio_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_not_selected_per_issue_active.ratio,smsp__average_warps_issue_stalled_math_pipe_throttle_per_issue_active.ratio,smsp__average_warps_issue_stalled_wait_per_issue_active.ratio,smsp__average_warps_issue_stalled_dispatch_stall_per_issue_active.ratio,smsp__average_warps_issue_stalled_no_instruction_per_issue_active.ratio,smsp__average_warps_issue_stalled_selected_per_issue_active.ratio" \
    $PY -c "$PROFILED" $LAST_STEP > "$OUT/ncu_fp32.csv" 2>> "$LOG" || status=1
  $PY benchmarks/fp32_profile.py "$OUT/ncu_fp32.csv" --into "$OUT/gpu_fp32.json" $LAST_STEP \
    2>&1 | tee -a "$LOG" || status=1
  tail -4 "$OUT/ncu_fp32.csv" | cut -c1-300 | tee -a "$LOG"
else
  echo "ncu not found; skipped" | tee -a "$LOG"
fi

step "done, status $status"
exit $status
