#!/usr/bin/env bash
# Issue 5 (Tensor Cores) on a GPU, in one call: the tensor-core tests on the gpu backend, the
# correctness / probe / timing run that writes tensorcore_h200.json, and compute-sanitizer
# (memcheck, racecheck) on small launches of every kernel variant.
#
#   bash benchmarks/gpu_tensorcore.sh [OUT_DIR]     # default: $OUT, else benchmarks/
#
# Expected time on an H200: about 3-4 minutes (first-time NVRTC compiles of 8 kernels ~1 min,
# tests ~1 min, timings of 2048/4096/8192 ~1 min, sanitizers ~1 min). Writes into OUT_DIR:
#   tensorcore_h200.json   the record (machine, correctness, probes, timings, sanitizer summary)
#   tensorcore_tests.txt, tensorcore_bench.txt, sanitizer_memcheck.txt, sanitizer_racecheck.txt
# Exit status: 0 when the tests pass and both sanitizers report no errors.
set -u
cd "$(dirname "$0")/.."
OUT_DIR="${1:-${OUT:-benchmarks}}"
mkdir -p "$OUT_DIR"
PY="${PYTHON:-python}"
export GEMMLAB_BACKEND=gpu
status=0

echo "== (a) tests on the gpu backend"
$PY -m pytest -q -rs -o addopts="" -p no:cacheprovider tests/test_tensorcore.py 2>&1 | tee "$OUT_DIR/tensorcore_tests.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== (b) correctness, probes, timings"
$PY benchmarks/tensorcore_gpu.py --out "$OUT_DIR/tensorcore_h200.json" 2>&1 | tee "$OUT_DIR/tensorcore_bench.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== (c) compute-sanitizer"
SAN="$(command -v compute-sanitizer || true)"
for candidate in /usr/local/cuda/bin/compute-sanitizer /usr/local/cuda/compute-sanitizer/compute-sanitizer; do
    [ -z "$SAN" ] && [ -x "$candidate" ] && SAN="$candidate"
done
if [ -z "$SAN" ]; then
    echo "compute-sanitizer not found (looked in PATH and /usr/local/cuda)" | tee "$OUT_DIR/sanitizer_memcheck.txt" "$OUT_DIR/sanitizer_racecheck.txt"
    status=1
else
    for tool in memcheck racecheck; do
        # --report-api-errors no: host-side symbol probes of cuda-bindings are not kernel errors
        "$SAN" --tool "$tool" --report-api-errors no --error-exitcode 99 $PY benchmarks/tensorcore_gpu.py --sanitize-launch \
            > "$OUT_DIR/sanitizer_$tool.txt" 2>&1
        rc=$?
        echo "$tool: exit $rc; $(grep -E '(ERROR|RACECHECK) SUMMARY' "$OUT_DIR/sanitizer_$tool.txt" | tail -1)"
        [ "$rc" -eq 0 ] || status=1
    done
fi
$PY benchmarks/tensorcore_gpu.py --merge-sanitizer "$OUT_DIR"
echo "== done (status $status); record: $OUT_DIR/tensorcore_h200.json"
exit $status
