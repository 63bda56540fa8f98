#!/usr/bin/env bash
# Issue 8 on ONE host with 2, 4 or 8 GPUs: the busbw curves of our ring against NCCL's own
# all-reduce, their alpha-beta fits, and the communication share of Megatron's FFN and attention.
#
#   bash benchmarks/gpu_multi.sh OUT_DIR             # every N in 2 4 8 that the GPUs allow
#   NS="2 4" TESTS=0 bash benchmarks/gpu_multi.sh OUT_DIR   # a subset, without the tests
#
# About 7-9 minutes on 8 H200s for everything; under a 10-minute limit per command, run the tests
# and each N in separate calls (NS=2 TESTS=1, then NS=4 TESTS=0, NS=8 TESTS=0): summary.json is
# rebuilt each time from every result in OUT_DIR.
#
# Writes into OUT_DIR:
#   machine.json, topology.txt             gl.measure.machine() with every GPU and the topology;
#                                          `nvidia-smi topo -m`
#   nccl_multi_tests.txt                   tests/test_collectives_nccl.py, gpu backend (TESTS=1)
#   allreduce_nccl_npN.{json,txt}          `gemmlab allreduce --backend nccl --sweep`: 8 KiB .. 1 GiB,
#                                          time, algbw, busbw, exact on every GPU, ours and NCCL's
#   megatron_{ffn,ffn_fp16,attention}_nccl_npN.json   local GEMM time vs all-reduce time
#   summary.json                           per N: busbw at 256 MiB, ours / NCCL's (goal >= 0.5,
#                                          beyond 0.8), alpha-beta fits, the layers' comm share
# NCCL_NVLS_ENABLE=0 is set here and by every launcher: NVLink multicast stays off.
set -u
cd "$(dirname "$0")/.."
OUT_DIR="${1:?usage: bash benchmarks/gpu_multi.sh OUT_DIR}"
mkdir -p "$OUT_DIR"
PY="${PYTHON:-python}"
export GEMMLAB_BACKEND=gpu NCCL_NVLS_ENABLE=0
NS="${NS:-2 4 8}"
TESTS="${TESTS:-1}"
status=0

GPUS=$($PY -c "from gemmlab.collectives.nccl import visible_gpus; print(visible_gpus())") || exit 2
echo "== $GPUS GPUs visible"
nvidia-smi topo -m > "$OUT_DIR/topology.txt" 2>&1
$PY - "$OUT_DIR/machine.json" "$OUT_DIR/topology.txt" <<'PY'
import json, subprocess, sys
import gemmlab as gl
gpus = subprocess.run(
    ["nvidia-smi", "--query-gpu=index,name,driver_version,memory.total", "--format=csv,noheader"],
    capture_output=True, text=True).stdout.strip().splitlines()
topology = open(sys.argv[2], encoding="utf-8").read()
json.dump(gl.measure.machine(nvidia_smi=gpus, topology=topology), open(sys.argv[1], "w"), indent=1)
PY

if [ "$TESTS" = 1 ]; then
    echo "== tests/test_collectives_nccl.py on the gpu backend"
    $PY -m pytest -q -rs -p no:cacheprovider tests/test_collectives_nccl.py 2>&1 | tee "$OUT_DIR/nccl_multi_tests.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

for N in $NS; do
    if [ "$N" -gt "$GPUS" ]; then
        echo "== N = $N skipped: needs $N GPUs, found $GPUS"
        continue
    fi
    echo "== N = $N: all-reduce sweep, ours and NCCL's"
    $PY -m gemmlab.cli allreduce --backend nccl --np "$N" --sweep --fit --timeout 540 \
        --json "$OUT_DIR/allreduce_nccl_np$N.json" 2>&1 | tee "$OUT_DIR/allreduce_nccl_np$N.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    for run in "ffn float32" "ffn_fp16 float16" "attention float32"; do
        set -- $run
        echo "== N = $N: $1"
        $PY -m gemmlab.parallel_nccl --np "$N" --layer "${1%_fp16}" --dtype "$2" \
            --json "$OUT_DIR/megatron_$1_nccl_np$N.json" || status=1
    done
done

echo "== summary"
$PY - "$OUT_DIR" <<'PY' || status=1
import glob, json, os, sys
from gemmlab.collectives.nccl import sweep_summary
out = sys.argv[1]
summary = {"goal": "our ring at >= 50% of NCCL's busbw at 256 MiB (beyond: 80%)", "by_ranks": {}}
for path in sorted(glob.glob(os.path.join(out, "allreduce_nccl_np*.json"))):
    records = json.load(open(path))
    if records and records[0]["n_ranks"] > 1:
        summary["by_ranks"][str(records[0]["n_ranks"])] = sweep_summary(records)
for path in sorted(glob.glob(os.path.join(out, "megatron_*_nccl_np*.json"))):
    r = json.load(open(path))
    entry = summary["by_ranks"].setdefault(str(r["n_ranks"]), {"n_ranks": r["n_ranks"]})
    entry.setdefault("layers", {})[os.path.basename(path)[len("megatron_"):].split("_nccl")[0]] = {
        k: r[k] for k in ("dtype", "tokens", "d_model", "gemm_seconds", "one_gpu_seconds",
                          "allreduce_seconds", "comm_share", "verified")}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
for n, entry in summary["by_ranks"].items():
    ratio = entry.get("ring_fraction_of_nccl")
    line = f"N = {n}: ring / NCCL busbw at 256 MiB " + (f"{ratio:.0%}" if ratio else "not measured")
    for name, layer in entry.get("layers", {}).items():
        shares = ", ".join(f"{a} {s:.0%}" for a, s in layer["comm_share"].items())
        line += f"; {name} all-reduce share: {shares}"
    print(line)
PY
echo "== done (status $status)"
exit $status
