#!/usr/bin/env bash
# The Hopper ladder of lesson 12 (part 2) on an sm_90 GPU, in one call: compile (nvcc, and NVRTC
# as a check), every stage checked at odd shapes in FP16 and BF16, timed at 4096^3 and 8192^3
# beside cuBLAS and the WMMA kernel, compute-sanitizer memcheck and racecheck on small odd
# launches of every stage, Nsight Compute stall and pipe metrics of one 4096^3 launch of each
# kernel, and the tests on the gpu backend.
#
#   bash benchmarks/gpu_hopper.sh [OUT_DIR]      # default: $OUT, else benchmarks/
#
# About 2 minutes on an H200. Writes OUT_DIR/hopper_h200.json (machine, checks, timings,
# group-size sweep, profiles, sanitizer summaries) and the logs beside it.
set -u
cd "$(dirname "$0")/.."
OUT_DIR="${1:-${OUT:-benchmarks}}"
mkdir -p "$OUT_DIR"
PY="${PYTHON:-python3}"
export GEMMLAB_BACKEND=gpu PYTHONUNBUFFERED=1
status=0
timeout 300 $PY benchmarks/hopper_gpu.py --out "$OUT_DIR/hopper_h200.json" --repeats 30 \
    > "$OUT_DIR/hopper.txt" 2>&1 || status=1
tail -25 "$OUT_DIR/hopper.txt"
PROFILES="$(mktemp -d)"
for tool in memcheck racecheck; do
    timeout 100 compute-sanitizer --tool "$tool" --report-api-errors no --error-exitcode 99 \
        $PY benchmarks/hopper_gpu.py --sanitize-launch > "$PROFILES/san_$tool.txt" 2>&1 || status=1
    echo "$tool: $(grep SUMMARY "$PROFILES/san_$tool.txt")"
done
METRICS="regex:smsp__average_warps_issue_stalled_.*_per_issue_active\.ratio"
METRICS+=",sm__pipe_tensor_op_hmma_cycles_active.avg.pct_of_peak_sustained_active"
METRICS+=",l1tex__data_pipe_lsu_wavefronts_mem_shared.avg.pct_of_peak_sustained_elapsed"
METRICS+=",lts__t_sectors.avg.pct_of_peak_sustained_elapsed"
METRICS+=",dram__throughput.avg.pct_of_peak_sustained_elapsed,gpu__time_duration.sum"
for kernel in wmma wgmma tma ws persistent; do       # --clock-control none: the card as found
    timeout 60 ncu --clock-control none -k 'regex:wmma|hopper' -c 1 --metrics "$METRICS" \
        $PY benchmarks/hopper_gpu.py --profile-launch "$kernel" > "$PROFILES/ncu_stall_$kernel.txt" 2>&1 \
        || status=1
done
$PY benchmarks/hopper_gpu.py --merge "$OUT_DIR/hopper_h200.json" "$PROFILES"
timeout 200 $PY -m pytest -q -p no:cacheprovider -o addopts="" tests/test_tensorcore_hopper.py \
    tests/test_bench.py 2>&1 | tail -3 || status=1
echo "== done (status $status): $OUT_DIR/hopper_h200.json"
exit $status
