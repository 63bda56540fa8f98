#!/usr/bin/env bash
# Issue 8 (multi-GPU over NCCL) on a machine with ONE GPU: everything that can run before a
# 2/4/8-GPU machine is available, in one call. About 2 minutes on an H200 (each launch starts
# Python, CuPy and NCCL anew, ~5-10 s).
#
#   bash benchmarks/gpu_single_nccl.sh [OUT_DIR]     # default: $OUT, else benchmarks/
#
#   1. the NCCL tests (collectives nccl, nccl_graph; parallel nccl) on the gpu backend: the CPU tests; the ring code on CuPy
#      arrays of one GPU; a one-rank NCCL communicator (our ring, NCCL's allReduce / reduceScatter /
#      allGather, an ncclSend/ncclRecv to itself); the CLI and both layers at N = 1; the refusal
#      of --np 2. The N = 2, 4, 8 tests skip with "needs N GPUs, found 1".
#   2. gemmlab allreduce --backend nccl --np 1 from 8 KiB to 256 MiB: both give the exact sum
#      (busbw is 0 at N = 1 by nccl-tests' convention; algbw is the device copy rate).
#   3. Megatron's FFN and attention at full size on one GPU over a one-rank communicator.
# Writes into OUT_DIR: nccl_single_tests.txt, allreduce_nccl_np1.{json,txt},
# megatron_{ffn,attention}_nccl_np1.json, megatron_nccl_np1.txt. Exit status 0 when all passed.
set -u
cd "$(dirname "$0")/.."
OUT_DIR="${1:-${OUT:-benchmarks}}"
mkdir -p "$OUT_DIR"
PY="${PYTHON:-python}"
export GEMMLAB_BACKEND=gpu NCCL_NVLS_ENABLE=0     # NVLink multicast stays off, always
status=0

echo "== (1) tests/test_collectives_nccl.py on the gpu backend"
$PY -m pytest -q -rs -p no:cacheprovider tests/test_collectives_nccl.py \
    tests/test_collectives_nccl_graph.py tests/test_parallel_nccl.py 2>&1 | tee "$OUT_DIR/nccl_single_tests.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== (2) all-reduce over NCCL at N = 1"
$PY -m gemmlab.cli allreduce --backend nccl --np 1 --size 8KiB,1MiB,64MiB,256MiB \
    --json "$OUT_DIR/allreduce_nccl_np1.json" 2>&1 | tee "$OUT_DIR/allreduce_nccl_np1.txt"
[ "${PIPESTATUS[0]}" -eq 0 ] || status=1

echo "== (3) Megatron FFN and attention at N = 1"
: > "$OUT_DIR/megatron_nccl_np1.txt"
for layer in ffn attention; do
    $PY -m gemmlab.cli tp --backend nccl --np 1 --layer "$layer" \
        --json "$OUT_DIR/megatron_${layer}_nccl_np1.json" 2>&1 | tee -a "$OUT_DIR/megatron_nccl_np1.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
done

echo "== done (status $status)"
exit $status
