"""The NVLink ring (``gemmlab.collectives.nvlink_ring``) for compute-sanitizer: small uneven cases
in every type the kernel adds, new inputs on each call, each result compared with the simulated
ring's. Run by ``benchmarks/gpu_multi.sh`` (MEMCHECK=1) as

    mpiexec -n N compute-sanitizer --tool memcheck python -m mpi4py benchmarks/nvlink_memcheck.py
"""
import cupy
import numpy as np
import gemmlab.collectives as C
from gemmlab.collectives import jobs, nccl, nvlink_ring

comm = jobs.world()
t = nccl.connect(comm)
n, rank = comm.Get_size(), comm.Get_rank()
for items, dtype in ((1001, np.float32), (n + 1, np.float32), (1, np.float32), (3000, np.float16),
                     (777, np.float64), (1235, np.int32), (99, np.int64), (100003, np.float32)):
    mine = cupy.zeros(items, dtype=dtype)
    ring = nvlink_ring.NvlinkRing(t, mine)
    for call in range(2):
        everyone = [np.random.default_rng([items, call, r]).integers(-50, 50, items).astype(dtype)
                    for r in range(n)]
        mine[...] = cupy.asarray(everyone[rank])
        got = ring().get()
        assert np.array_equal(got, C.ring_allreduce(everyone).outputs[rank]), (items, dtype)
    ring.close()
    print(f"rank {rank}: exact under the sanitizer: {items} {np.dtype(dtype).name}", flush=True)
t.close()
