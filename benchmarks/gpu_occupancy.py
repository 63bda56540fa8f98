"""Blocks per SM: the course's model against the CUDA driver's occupancy calculator.

    python benchmarks/gpu_occupancy.py [--out benchmarks/gpu_occupancy.json]

For a trivial kernel (dynamic shared memory, a barrier, a few registers), sweeps the shared memory
per block and the threads per block, and asks the driver
(``cuOccupancyMaxActiveBlocksPerMultiprocessor``, the driver API behind
``cudaOccupancyMaxActiveBlocksPerMultiprocessor``) how many blocks fit on one SM, beside what
``gl.perfmodel.blocks_per_sm`` predicts with the kernel's own register count on this GPU's limits
(``gl.device.spec().sm``, from the driver's attributes; beside them, the course's table for its
compute capability). It also launches the kernel with the largest shared memory a block may have
(227 KiB on Hopper, 99 KiB on an RTX 4090) and with 4 bytes more, which must be refused. Prints one JSON document: the machine, the device's shared-memory
attributes, every row, and the rows where model and driver disagree. Needs a GPU and CuPy.
"""
import argparse
import json
import sys

KIB = 1024
THREADS = (32, 64, 128, 256, 512, 1024)
SHARED_KIB = (0, 1, 8, 16, 32, 47, 48, 56, 64, 75, 100, 112, 113, 114, 150, 200, 226, 227)

SOURCE = r"""
extern "C" __global__ void touch(float* out) {
    extern __shared__ float buffer[];
    buffer[threadIdx.x] = (float)threadIdx.x;
    __syncthreads();
    out[blockIdx.x * blockDim.x + threadIdx.x] = buffer[blockDim.x - 1 - threadIdx.x];
}
"""


def sweep(driver_blocks, model_blocks, threads=THREADS, shared_kib=SHARED_KIB, max_shared=None):
    """Rows {threads, shared_bytes, driver, model, agree} for every pair a block may have.

    ``driver_blocks(threads, shared_bytes)`` and ``model_blocks(threads, shared_bytes)`` return
    blocks per SM; pairs above ``max_shared`` bytes per block are skipped (they cannot launch)."""
    rows = []
    for t in threads:
        for kib in shared_kib:
            smem = kib * KIB
            if max_shared is not None and smem > max_shared:
                continue
            driver, model = int(driver_blocks(t, smem)), int(model_blocks(t, smem))
            rows.append({"threads": t, "shared_bytes": smem, "driver": driver, "model": model,
                         "agree": driver == model})
    return rows


def _device_facts(cupy):
    props = cupy.cuda.runtime.getDeviceProperties(cupy.cuda.Device().id)
    wanted = ("name", "major", "minor", "multiProcessorCount", "sharedMemPerMultiprocessor",
              "sharedMemPerBlock", "sharedMemPerBlockOptin", "reservedSharedMemPerBlock",
              "regsPerMultiprocessor", "maxThreadsPerMultiProcessor", "maxBlocksPerMultiProcessor")
    facts = {k: props[k] for k in wanted if k in props}
    if isinstance(facts.get("name"), bytes):
        facts["name"] = facts["name"].decode()
    return facts


def _launch_ok(cupy, kernel, shared_bytes, threads=256):
    out = cupy.empty(threads, dtype=cupy.float32)
    try:
        kernel((1,), (threads,), (out,), shared_mem=shared_bytes)
        cupy.cuda.Device().synchronize()
        return True, ""
    except Exception as exc:  # the refusal is the measurement
        return False, f"{type(exc).__name__}: {exc}"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--out", help="also write the JSON to this file")
    args = parser.parse_args(argv)

    import cupy

    import gemmlab as gl

    sm = gl.device.spec().sm
    table = gl.perfmodel.sm_resources(gl.device.spec().compute_capability)
    facts = _device_facts(cupy)
    max_shared = facts.get("sharedMemPerBlockOptin", sm.max_shared_per_block)
    kernel = cupy.RawKernel(SOURCE, "touch")
    kernel.max_dynamic_shared_size_bytes = max_shared          # opt in above 48 KiB
    regs = kernel.num_regs

    def driver_blocks(threads, smem):
        return cupy.cuda.driver.occupancyMaxActiveBlocksPerMultiprocessor(
            kernel.kernel.ptr, threads, smem)

    def model_blocks(threads, smem):
        return gl.perfmodel.blocks_per_sm(regs, threads, smem, sm)[0]

    rows = sweep(driver_blocks, model_blocks, max_shared=max_shared)
    launches = {str(size): dict(zip(("ok", "error"), _launch_ok(cupy, kernel, size), strict=True))
                for size in (max_shared, max_shared + 4)}
    report = {
        "machine": gl.measure.machine(gpu="cupy"),
        "device": facts,
        "table_agrees": all(getattr(sm, f) == getattr(table, f) for f in (
            "registers", "max_threads", "max_blocks", "shared_bytes", "max_shared_per_block",
            "reserved_shared_per_block")),
        "model": {"sm": sm.name, "shared_bytes": sm.shared_bytes,
                  "max_shared_per_block": sm.max_shared_per_block,
                  "reserved_shared_per_block": sm.reserved_shared_per_block, "source": sm.source},
        "kernel": {"name": "touch", "regs": regs, "max_dynamic_shared_size_bytes": max_shared},
        "launches": launches,
        "rows": rows,
        "disagreements": [r for r in rows if not r["agree"]],
    }
    text = json.dumps(report, indent=1)
    print(text)
    if args.out:
        with open(args.out, "w", encoding="utf-8") as f:
            f.write(text + "\n")
    return 0 if (not report["disagreements"] and launches[str(max_shared)]["ok"]
                 and report["table_agrees"]) else 1


if __name__ == "__main__":
    sys.exit(main())
