#!/usr/bin/env bash
# The Hopper ladder of lesson 12 (part 2) on an sm_90 GPU, in one call: every kernel and option
# checked at odd shapes in FP16 and BF16, the goal shapes timed beside cuBLAS (cupy.matmul and
# gemmEx), the ladder at 4096^3 and 8192^3, then (unless QUICK=1) compute-sanitizer memcheck and
# racecheck on small odd launches of every kernel, Nsight Compute metrics of one launch of each
# step at 4096^3 and of each goal shape that stays under its goal, and the Tensor Core tests on
# the gpu backend.
#
#   bash benchmarks/gpu_hopper.sh [OUT_DIR]      # default: $OUT, else benchmarks/
#
# Writes OUT_DIR/hopper_h200.json (machine, checks, timings, profiles, sanitizer summaries) and
# the logs beside it. Kernels are compiled by NVRTC (cached in $XDG_CACHE_HOME/gemmlab/cubin).
set -u
cd "$(dirname "$0")/.."
OUT_DIR="${1:-${OUT:-benchmarks}}"
mkdir -p "$OUT_DIR"
PY="${PYTHON:-python3}"
RECORD="$OUT_DIR/hopper_h200.json"
export GEMMLAB_BACKEND=gpu PYTHONUNBUFFERED=1
status=0
timeout 330 $PY benchmarks/hopper_gpu.py --out "$RECORD" ${HOPPER_ARGS:-} > "$OUT_DIR/hopper.txt" 2>&1 \
    || status=1
grep -v "^ *skip" "$OUT_DIR/hopper.txt" | tail -70
[ "${QUICK:-0}" = 1 ] && { echo "== quick run done (status $status)"; exit $status; }
PROFILES="$OUT_DIR/profiles"
mkdir -p "$PROFILES"
for tool in memcheck racecheck; do
    timeout 150 compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 99 \
        $PY benchmarks/hopper_gpu.py --sanitize-launch > "$PROFILES/san_$tool.txt" 2>&1 || status=1
    echo "$tool: $(grep SUMMARY "$PROFILES/san_$tool.txt" | tail -1)"
done
METRICS="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
METRICS+=",sm__pipe_tensor_op_gmma_cycles_active.avg.pct_of_peak_sustained_active"
METRICS+=",sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
METRICS+=",l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed"
METRICS+=",lts__t_sectors.avg.pct_of_peak_sustained_elapsed"
METRICS+=",dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum"
METRICS+=",sm__throughput.avg.pct_of_peak_sustained_elapsed,launch__grid_size"
SPECS="$($PY benchmarks/hopper_gpu.py --profile-specs "$RECORD")"
COUNT=$(echo $SPECS | wc -w)
timeout 240 ncu --clock-control none -k 'regex:hopper|wmma' -c "$COUNT" --metrics "$METRICS" \
    $PY benchmarks/hopper_gpu.py --profile-launch $SPECS > "$PROFILES/ncu.txt" 2>&1 || status=1
echo "ncu: $COUNT launches ($SPECS): $(grep -c 'gpu__time_duration' "$PROFILES/ncu.txt") profiled"
$PY benchmarks/hopper_gpu.py --merge "$RECORD" "$PROFILES" "$SPECS"
timeout 150 $PY -m pytest -q -p no:cacheprovider -p no:randomly -o addopts="" \
    tests/test_tensorcore_hopper.py tests/test_tensorcore.py tests/test_bench.py \
    > "$OUT_DIR/pytest_gpu.txt" 2>&1 || status=1
echo "pytest (gpu backend): $(tail -1 "$OUT_DIR/pytest_gpu.txt")"
echo "== done (status $status): $RECORD"
exit $status
