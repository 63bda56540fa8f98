#!/usr/bin/env bash
# Issue 17 on ONE host with 2, 4 or 8 GPUs: where our ring's time goes, the busbw curves of our
# ring beside NCCL's all-reduce, reduce-scatter and all-gather, their alpha-beta fits, and the
# communication share of Megatron's FFN and attention (FP32 and FP16).
#
#   bash benchmarks/gpu_multi.sh OUT_DIR                      # everything, every N the GPUs allow
#   NS=2 TESTS=0 LAYERS=0 bash benchmarks/gpu_multi.sh OUT_DIR   # a subset
#
# Steps, each switched by a variable (1 = run): TESTS, BREAKDOWN, SWEEP, LAYERS, MEMCHECK; NS lists the
# rank counts (default "2 4 8"; an N above the GPU count is skipped, saying so). ALGOS: the sweep's
# algorithms; LAYER_ALGOS: the all-reduces timed in the layers. Every multi-rank step runs under
# the launcher's timeout and an outer `timeout`.
# For N = 2 on two H200s: the tests about 4 minutes, breakdown and sweep about 1, the layers about 1.
#
# Writes into OUT_DIR:
#   machine.json, topology.txt          gl.measure.machine() with every GPU and the topology;
#                                       `nvidia-smi topo -m`
#   nccl_multi_tests.txt                the NCCL and tensor-parallel tests on the gpu backend
#   ring_breakdown_npN.json             benchmarks/ring_breakdown.py: every way of driving our
#                                       ring, GPU and host time, the time of one step split up
#   allreduce_nccl_npN.{json,txt}       `gemmlab allreduce --backend nccl --sweep`: 8 KiB .. 1 GiB,
#                                       time, algbw, busbw, exact on every GPU
#   nvlink_memcheck_npN.txt             the NVLink ring's test program on N GPUs, every rank
#                                       under compute-sanitizer memcheck
#   layers_nccl_npN.json                `gemmlab tp --backend nccl`: FFN and attention, FP32 and
#                                       FP16, local GEMM time vs all-reduce time
#   summary.json                        per N: busbw at 256 MiB, ours / NCCL's, the fits (alpha =
#                                       per-step cost), the layers' communication share
# NCCL_NVLS_ENABLE=0 is set here and by the launcher in every rank: NVLink multicast stays off.
set -u
cd "$(dirname "$0")/.."
OUT_DIR="${1:?usage: bash benchmarks/gpu_multi.sh OUT_DIR}"
mkdir -p "$OUT_DIR"
PY="${PYTHON:-python}"
export GEMMLAB_BACKEND=gpu NCCL_NVLS_ENABLE=0
NS="${NS:-2 4 8}"
TESTS="${TESTS:-1}" BREAKDOWN="${BREAKDOWN:-1}" SWEEP="${SWEEP:-1}" LAYERS="${LAYERS:-1}"
MEMCHECK="${MEMCHECK:-1}"
ALGOS="${ALGOS:-ring,ring_stepwise,ring_nvlink,nccl,nccl_reduce_scatter,nccl_allgather}"
LAYER_ALGOS="${LAYER_ALGOS:-ring,ring_stepwise,ring_nvlink,nccl}"
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
    echo "== NCCL and tensor-parallel tests on the gpu backend"
    timeout 420 $PY -m pytest -q -rs -p no:cacheprovider tests/test_collectives_nccl.py \
        tests/test_collectives_nccl_graph.py tests/test_collectives_nvlink_ring.py \
        tests/test_parallel_nccl.py 2>&1 \
        | tee "$OUT_DIR/nccl_multi_tests.txt"
    [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
fi

for N in $NS; do
    if [ "$N" -gt "$GPUS" ]; then
        echo "== N = $N skipped: needs $N GPUs, found $GPUS"
        continue
    fi
    if [ "$BREAKDOWN" = 1 ]; then
        echo "== N = $N: where our ring's time goes"
        timeout 330 $PY benchmarks/ring_breakdown.py --np "$N" --timeout 300 \
            --out "$OUT_DIR/ring_breakdown_np$N.json" --nccl-log "$OUT_DIR/nccl_log_np$N" || status=1
    fi
    if [ "$SWEEP" = 1 ]; then
        echo "== N = $N: all-reduce sweep, ours and NCCL's"
        timeout 270 $PY -m gemmlab.cli allreduce --backend nccl --np "$N" --sweep --fit \
            --algo "$ALGOS" --timeout 240 --json "$OUT_DIR/allreduce_nccl_np$N.json" 2>&1 \
            | tee "$OUT_DIR/allreduce_nccl_np$N.txt"
        [ "${PIPESTATUS[0]}" -eq 0 ] || status=1
    fi
    if [ "$MEMCHECK" = 1 ]; then
        echo "== N = $N: the NVLink ring's test program under compute-sanitizer memcheck"
        # the program of tests/test_collectives_nvlink_ring.py, each rank inside the sanitizer (it
        # does not follow ranks started by an mpiexec it runs); a memory error in a kernel ends
        # the rank with status 3, and every rank that reaches its end leaves rank<r>.ok
        work="$OUT_DIR/memcheck_np$N"; mkdir -p "$work"
        (cd tests && $PY -c "import test_collectives_nvlink_ring as t; print(t.NVLINK_PROGRAM)") \
            > "$work/program.py"
        timeout 420 "$(command -v mpiexec)" -n "$N" compute-sanitizer --tool memcheck \
            --leak-check no --report-api-errors no --error-exitcode 3 \
            "$($PY -c 'import sys; print(sys.executable)')" -m mpi4py "$work/program.py" "$work" \
            > "$OUT_DIR/nvlink_memcheck_np$N.txt" 2>&1 || status=1
        [ "$(ls "$work" | grep -c '^rank.*\.ok$')" -eq "$N" ] || status=1
        rm -r "$work"
        tail -3 "$OUT_DIR/nvlink_memcheck_np$N.txt"
    fi
    if [ "$LAYERS" = 1 ]; then
        for run in "ffn float32" "ffn float16" "attention float32" "attention float16"; do
            set -- $run
            echo "== N = $N: $1 $2"
            timeout 150 $PY -m gemmlab.cli tp --backend nccl --np "$N" --layer "$1" --dtype "$2" \
                --algo "$LAYER_ALGOS" --timeout 120 --json "$OUT_DIR/layer_$1_$2_np$N.json" \
                || status=1
        done
    fi
done

echo "== summary"
$PY - "$OUT_DIR" <<'PY' || status=1
import glob, json, os, sys
from gemmlab.collectives.allreduce_command import sweep_summary
out = sys.argv[1]
summary = {"machine": json.load(open(os.path.join(out, "machine.json"))), "by_ranks": {}}
for path in sorted(glob.glob(os.path.join(out, "allreduce_nccl_np*.json"))):
    records = json.load(open(path))
    if records and records[0]["n_ranks"] > 1:
        summary["by_ranks"][str(records[0]["n_ranks"])] = sweep_summary(records)
layers = {}
for path in sorted(glob.glob(os.path.join(out, "layer_*_np*.json"))):
    r = json.load(open(path))
    layers.setdefault(r["n_ranks"], []).append(r)
for n, reports in layers.items():
    json.dump(reports, open(os.path.join(out, f"layers_nccl_np{n}.json"), "w"), indent=1)
    entry = summary["by_ranks"].setdefault(str(n), {"n_ranks": n})
    entry["layers"] = {f"{r['layer']} {r['dtype']}": {
        k: r[k] for k in ("tokens", "d_model", "payload_bytes", "gemm_seconds", "one_gpu_seconds",
                          "allreduce_seconds", "comm_share", "verified")} for r in reports}
json.dump(summary, open(os.path.join(out, "summary.json"), "w"), indent=1)
for n, entry in summary["by_ranks"].items():
    fits = {f["algorithm"]: f for f in entry.get("fits", [])}
    line = f"N = {n}:"
    if entry.get("ring_fraction_of_nccl"):
        line += (f" {entry['ring_algorithm']} / NCCL busbw at 256 MiB {entry['ring_fraction_of_nccl']:.0%}, lowest from"
                 f" 256 MiB up {entry['ring_lowest_fraction_from_headline']:.0%};")
    for name in ("ring_nvlink", "ring", "ring_stepwise", "nccl"):
        if name in fits:
            line += f" {name} {fits[name]['alpha_us']:.1f} us/step, {fits[name]['bandwidth_GBps']:.0f} GB/s;"
    for name, layer in entry.get("layers", {}).items():
        shares = ", ".join(f"{a} {s:.0%}" for a, s in layer["comm_share"].items())
        line += f" {name} all-reduce share: {shares};"
    print(line)
PY
echo "== done (status $status)"
exit $status
