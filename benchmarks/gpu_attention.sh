#!/usr/bin/env bash
# Issue 57 (lesson 16's Tensor Core rung) on a GPU, in one call: the fused attention kernel checked
# against float64 and timed beside torch's SDPA (attention_gpu.py), then compute-sanitizer
# (memcheck, racecheck) on small launches of every configuration.
#
#   bash benchmarks/gpu_attention.sh [OUT_DIR] [--quick]    # default: $OUT, else benchmarks/
#
# Writes into OUT_DIR: attention_gpu.json (machine, correctness, timings), attention_bench.txt,
# sanitizer_memcheck.txt, sanitizer_racecheck.txt. Exit 0 when every check passes and both
# sanitizers report no errors.
set -u
cd "$(dirname "$0")/.."
OUT_DIR="${1:-${OUT:-benchmarks}}"
QUICK="${2:-}"
mkdir -p "$OUT_DIR"
PY="${PYTHON:-python3}"
export GEMMLAB_BACKEND=gpu CUDA_CACHE_DISABLE=1
status=0
nvidia-smi --query-gpu=name,driver_version --format=csv,noheader

echo "== (a) correctness and timings"
$PY benchmarks/attention_gpu.py --out "$OUT_DIR/attention_gpu.json" $QUICK 2>&1 | tee "$OUT_DIR/attention_bench.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== (b) compute-sanitizer"
for tool in memcheck racecheck; do
    compute-sanitizer --tool "$tool" --error-exitcode 3 $PY benchmarks/attention_gpu.py --out /dev/null --sanitize \
        > "$OUT_DIR/sanitizer_$tool.txt" 2>&1
    rc=$?
    tail -n 3 "$OUT_DIR/sanitizer_$tool.txt"
    echo "$tool exit status: $rc"
    [ "$rc" -eq 0 ] || status=1
done
exit $status
