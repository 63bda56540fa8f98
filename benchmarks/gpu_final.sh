#!/usr/bin/env bash
# Issue 39's closing figures on one sm_90 GPU, in one device call (each step has its own time
# limit and keeps its figures when a later step fails):
#   1. the three Hopper builds (fp16, bf16, e4m3) compiled side by side (NVRTC, cached);
#   2. final_ncu.py: Nsight Compute on one launch of each final (auto) plan, FP16 at every shape
#      of library_gpu.SHAPES and FP8 at 8192^3 -> OUT_DIR/hopper_final_ncu.{csv,json};
#   3. the FP32 ladder, every rung at 4096^3, by `gemmlab bench` (fair timer, the fastest SGEMM
#      library as baseline) -> OUT_DIR/gpu_ladder.json;
#   4. lessons 12 and 12b (notebook and exercise solutions) through nbval on the gpu backend;
#   5. (FULL=1) library_gpu.py, every part -> OUT_DIR/library.json, written before step 2 so
#      that the profiles are read against libraries timed in the same call.
#
#   bash benchmarks/gpu_final.sh [OUT_DIR]      # default: $OUT, else benchmarks/
set -u
cd "$(dirname "$0")/.."
OUT_DIR="${1:-${OUT:-benchmarks}}"
mkdir -p "$OUT_DIR"
PY="${PYTHON:-python3}"
export GEMMLAB_BACKEND=gpu PYTHONUNBUFFERED=1 CUDA_CACHE_DISABLE=1
status=0
step() { echo "=== $1 ($(date -u +%H:%M:%S))"; }
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
step "1. builds"
for fmt in fp16 bf16 e4m3; do
    $PY -c "from gemmlab.tensorcore.hopper import build; build.compile_format('$fmt')" &
done
wait
if [ "${FULL:-0}" = 1 ]; then
    step "5. library_gpu.py"
    timeout 150 $PY benchmarks/library_gpu.py --out "$OUT_DIR/library.json" --parts fp16 fp32 fp8 \
        > "$OUT_DIR/library.txt" 2>&1 || status=1
    grep -E "^[0-9]|%|best|error|Error" "$OUT_DIR/library.txt" | tail -40
fi
step "2. final plans under Nsight Compute"
timeout 200 $PY benchmarks/final_ncu.py "$OUT_DIR" > "$OUT_DIR/final_ncu.txt" 2>&1 || status=1
grep -vE "^==PROF==|^ +" "$OUT_DIR/final_ncu.txt" | tail -14
step "3. FP32 ladder at 4096"
timeout 150 $PY -m gemmlab.cli bench --sizes 4096 --quiet --out "$OUT_DIR/gpu_ladder.json" \
    > "$OUT_DIR/ladder.txt" 2>&1 || status=1
tail -14 "$OUT_DIR/ladder.txt"
step "4. lessons 12 and 12b on the GPU"
timeout 240 $PY -m pytest -q -n 4 --dist loadfile notebooks/12_tensor_cores.ipynb \
    notebooks/12b_hopper_ladder.ipynb solutions/12_tensor_cores_exercises.ipynb \
    > "$OUT_DIR/lessons12.txt" 2>&1 || status=1
tail -5 "$OUT_DIR/lessons12.txt"
step "done (status $status)"
exit $status
