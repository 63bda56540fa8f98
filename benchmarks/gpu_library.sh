#!/usr/bin/env bash
# Issue 39 on one sm_90 GPU, in one call of at most ~9 minutes (run each step's figures are kept
# even when a later one fails):
#   1. the three Hopper builds (fp16, bf16, e4m3) compiled side by side (NVRTC, cached);
#   2. library_gpu.py: FP16 shapes (every plan, the 64-row decode tiles included), FP32 and FP8
#      beside the best library, with the fair timer -> OUT_DIR/library.json;
#   3. fp32_sweep.py: unrolled's tile variants beside the best SGEMM -> OUT_DIR/fp32_sweep.json;
#   4. the Tensor Core tests on the gpu backend (float64 checks of every kernel and plan);
#   5. compute-sanitizer memcheck, racecheck and synccheck on small odd launches of every Hopper
#      kernel (hopper_gpu.py --sanitize-launch).
#
#   bash benchmarks/gpu_library.sh [OUT_DIR]      # default: $OUT, else benchmarks/
set -u
cd "$(dirname "$0")/.."
OUT_DIR="${1:-${OUT:-benchmarks}}"
PY="${PYTHON:-python3}"
export GEMMLAB_BACKEND=gpu PYTHONUNBUFFERED=1 CUDA_CACHE_DISABLE=1
status=0
nvidia-smi --query-gpu=name,driver_version,clocks.max.sm --format=csv,noheader
for fmt in fp16 bf16 e4m3; do
    $PY -c "from gemmlab.tensorcore.hopper import build; build.compile_format('$fmt')" &
done
wait
timeout 240 $PY benchmarks/library_gpu.py --out "$OUT_DIR/library.json" --parts fp16 fp32 fp8 \
    > "$OUT_DIR/library.txt" 2>&1 || status=1
grep -E "^[0-9]|%|best|error|Error" "$OUT_DIR/library.txt" | tail -60
timeout 150 $PY benchmarks/fp32_sweep.py --out "$OUT_DIR/fp32_sweep.json" > "$OUT_DIR/sweep.txt" 2>&1 \
    || status=1
tail -25 "$OUT_DIR/sweep.txt"
timeout 120 $PY -m pytest -q -n 4 -p no:cacheprovider -o addopts="" tests/test_tensorcore_hopper.py \
    > "$OUT_DIR/pytest_hopper.txt" 2>&1 || status=1
echo "pytest hopper (gpu backend): $(tail -1 "$OUT_DIR/pytest_hopper.txt")"
for tool in memcheck racecheck synccheck; do
    timeout 60 compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 99 \
        $PY benchmarks/hopper_gpu.py --sanitize-launch > "$OUT_DIR/san_$tool.txt" 2>&1 || status=1
    echo "$tool: $(grep SUMMARY "$OUT_DIR/san_$tool.txt" | tail -1)"
done
echo "== done (status $status)"
exit $status
