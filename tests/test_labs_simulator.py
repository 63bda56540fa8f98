"""The instrumented simulator itself: what it counts and reports, that race-free kernels get no
report, that it does not change results, and that it never hangs."""
import math

import numpy as np
import pytest
from numba import float32

import gemmlab as gl

if gl.device.backend() != "sim":
    pytest.skip("the instrumented simulator runs on the simulator backend", allow_module_level=True)
from gemmlab.labs.simulator import simulate  # noqa: E402

cuda = gl.device.cuda()
RNG = np.random.default_rng(3)


def matrices(M, N, K):
    A = RNG.uniform(-1, 1, (M, K)).astype(np.float32)
    B = RNG.uniform(-1, 1, (K, N)).astype(np.float32)
    return A, B, np.full((M, N), 7.0, np.float32)


def run_rung(name, tiles, M, N, K):
    """One of the course's rungs, with its own launch plan, on the instrumented simulator."""
    rung = gl.kernels.get(name)
    plan = rung.plan(**tiles)
    A, B, C = matrices(M, N, K)
    args = [("A", A), ("B", B), ("C", C), ("C", C), ("alpha", np.float32(1)),
            ("beta", np.float32(0))]
    trace = simulate(rung.kernel(**tiles), plan.grid(M, N), plan.block, args)
    return A, B, C, trace


SIM_TILES = [(name, gl.kernels.get(name).default_tiles()) for name in ("tiled", "outer", "pingpong",
                                                                      "twolevel")]


@pytest.mark.parametrize("name,tiles", SIM_TILES, ids=[n for n, _ in SIM_TILES])
def test_race_free_kernels_get_no_report_and_the_same_result_as_the_plain_simulator(name, tiles):
    A, B, C, trace = run_rung(name, tiles, 21, 19, 13)
    assert trace.fault is None and trace.races == [] and trace.uninitialized == []
    plain = gl.gemm(A, B, kernel=name, **tiles)         # Numba's own simulator, uninstrumented
    assert np.array_equal(C, plain)


def test_global_reads_are_counted_per_element_and_barriers_per_block():
    M, N, K = 21, 35, 19
    naive = gl.kernels.get("naive").kernel(BX=16, BY=16)
    A, B, C = matrices(M, N, K)
    trace = simulate(naive, (3, 2), (16, 16), [("A", A), ("B", B), ("C", C), ("C", C),
                                                ("alpha", np.float32(1)), ("beta", np.float32(0))])
    assert (trace.arrays["A"].counts("reads") == N).all()        # every column reads the row
    assert (trace.arrays["C"].counts("writes") == 1).all()
    assert set(trace.barriers.values()) == {0}
    A, B, C, trace = run_rung("tiled", {"T": 16}, M, N, K)
    assert (trace.arrays["A"].counts("reads") == math.ceil(N / 16)).all()
    assert set(trace.barriers.values()) == {2 * math.ceil(K / 16)}
    reads = 6 * 256 * 2 * 16        # blocks x threads x K tiles x reads of each tile per thread
    assert trace.shared == {"As": reads, "Bs": reads}


@cuda.jit
def reads_row_minus_one(A, B, C):
    C[0, 0] = A[cuda.threadIdx.x - 1, 0]


@cuda.jit
def writes_past_the_shared_tile(A, B, C):
    tile = cuda.shared.array(8, float32)
    tile[cuda.threadIdx.x] = 1.0


def _line_of(text):
    """The line of this file that holds ``text`` (what the fault must name)."""
    return next(n for n, line in enumerate(open(__file__), 1) if text in line and "@" not in line)


@pytest.mark.parametrize("kernel,words", [
    (reads_row_minus_one, "thread 0 of block 0 read A[-1, 0] at line {} (`C[0, 0] = "
                          "A[cuda.threadIdx.x - 1, 0]`), outside the 4 x 4 array A (row -1 < 0)"),
    (writes_past_the_shared_tile, "thread 8 of block 0 wrote tile[8] at line {} (`tile[cuda."
                                  "threadIdx.x] = 1.0`), outside the 8 shared array tile"),
])
def test_out_of_bounds_names_index_thread_and_block(kernel, words):
    statement = words.split("(`")[1].split("`)")[0]
    words = words.format(_line_of("    " + statement))
    A = np.ones((4, 4), np.float32)
    trace = simulate(kernel, 1, 16, [("A", A), ("B", A), ("C", A.copy())])
    assert trace.fault.kind == "out of bounds" and words in str(trace.fault)


@cuda.jit
def write_write(A, B, C):
    tile = cuda.shared.array(1, float32)
    tile[0] = cuda.threadIdx.x * C[0, 0]      # different values from different threads
    cuda.syncthreads()
    C[0, 1] = tile[0]


@cuda.jit
def same_value_writes(A, B, C):
    flag = cuda.shared.array(1, float32)
    flag[0] = 1.0                             # benign: every thread writes the same value
    cuda.syncthreads()
    C[0, cuda.threadIdx.x] = flag[0]


def test_writes_of_different_values_in_one_interval_race_and_equal_ones_do_not():
    A = np.ones((2, 4), np.float32)
    trace = simulate(write_write, 1, 4, [("A", A), ("B", A), ("C", A.copy())])
    assert trace.races[0].kind == "write-write"
    assert "thread 0 and thread 1 of block 0 both wrote tile[0] with different values" in \
        trace.races[0].describe()
    trace = simulate(same_value_writes, 1, 4, [("A", A), ("B", A), ("C", A.copy())])
    assert trace.races == [] and trace.fault is None


@cuda.jit
def reads_a_neighbour_after_the_barrier(A, B, C):
    tile = cuda.shared.array(4, float32)
    t = cuda.threadIdx.x
    tile[t] = A[0, t]
    cuda.syncthreads()
    C[0, t] = tile[(t + 1) % 4]


@cuda.jit
def reads_an_element_nobody_writes(A, B, C):
    tile = cuda.shared.array(4, float32)
    t = cuda.threadIdx.x
    if t < 3:
        tile[t] = A[0, t]
    cuda.syncthreads()
    C[0, t] = tile[3]


def test_reads_across_a_barrier_are_fine_and_reads_of_unwritten_shared_memory_are_reported():
    A = np.arange(8, dtype=np.float32).reshape(2, 4)
    C = A.copy()
    trace = simulate(reads_a_neighbour_after_the_barrier, 1, 4, [("A", A), ("B", A), ("C", C)])
    assert trace.races == [] and trace.uninitialized == []
    assert list(C[0]) == [1, 2, 3, 0]
    trace = simulate(reads_an_element_nobody_writes, 1, 4, [("A", A), ("B", A), ("C", A.copy())])
    assert trace.uninitialized[0][:4] == ("tile", (3,), "thread 0", "block 0")
    assert trace.uninitialized[0][4].endswith("(`C[0, t] = tile[3]`)")     # the cell's line


@cuda.jit
def forgets_to_clear(A, B, C):
    acc = cuda.local.array(1, float32)
    acc[0] += A[0, 0]
    C[0, 0] = acc[0]


def test_a_local_array_read_before_it_is_written_stops_the_run():
    A = np.ones((1, 1), np.float32)
    C = np.zeros((1, 1), np.float32)
    trace = simulate(forgets_to_clear, 1, 1, [("A", A), ("B", A), ("C", C)])
    assert trace.fault.kind == "unwritten" and "read acc[0]" in str(trace.fault)
    assert C[0, 0] == 0                         # the run stopped before the store


@cuda.jit
def endless(A, B, C):
    while True:
        pass


def test_an_endless_kernel_is_stopped_at_the_time_limit():
    A = np.ones((1, 1), np.float32)
    trace = simulate(endless, 1, 2, [("A", A), ("B", A), ("C", A)], time_limit=0.5)
    assert trace.fault.kind == "timeout" and "did not finish within 0.5 s" in str(trace.fault)


@cuda.jit(device=True)
def divide(x, y):
    return x // y


@cuda.jit
def raises_in_a_device_function(A, B, C):
    C[0, 0] = divide(3, cuda.threadIdx.x - 1)


def test_an_exception_names_the_thread_and_the_line():
    A = np.ones((1, 1), np.float32)
    trace = simulate(raises_in_a_device_function, 1, 4, [("A", A), ("B", A), ("C", A)])
    assert trace.fault.kind == "exception"
    assert "thread 1 of block 0 raised ZeroDivisionError" in str(trace.fault)
    assert "`return x // y`" in str(trace.fault)


@cuda.jit
def uses_the_cuda_api(A, B, C):
    x, y = cuda.grid(2)
    count = cuda.syncthreads_count(x % 2)
    if x < C.shape[1] and y < C.shape[0]:
        C[y, x] = count * 100 + cuda.laneid


def test_grid_laneid_and_barrier_votes_work_on_the_instrumented_module():
    A = np.zeros((1, 1), np.float32)
    C = np.zeros((2, 4), np.float32)
    trace = simulate(uses_the_cuda_api, (1, 1), (4, 2), [("A", A), ("B", A), ("C", C)])
    assert trace.fault is None and trace.barriers == {(0, 0, 0): 2}
    assert C.tolist() == [[400, 401, 402, 403], [404, 405, 406, 407]]


def test_simulate_refuses_what_is_not_a_kernel():
    with pytest.raises(TypeError, match="expected a @cuda.jit kernel"):
        simulate(lambda A, B, C: None, 1, 1, [])


@cuda.jit(device=True)
def _twice(x):
    return x * 2


@cuda.jit(device=True)
def _twice_then_fail(x, fail):
    if fail:
        raise ValueError("asked to")
    return _twice(x)


def test_device_functions_run_unwrapped_during_a_launch_and_are_put_back_after_it():
    """During a launch a device function of the kernel's module (a global, or closed over) is
    called as its plain function; after the run, also one that raised, each name and cell holds
    the @cuda.jit object again, and device calls still see the launch's cuda module."""
    def make():
        @cuda.jit(device=True)
        def add_index(out, i):
            out[i] = _twice_then_fail(float32(i), False) + cuda.threadIdx.x

        @cuda.jit
        def kernel(out, fail):
            i = cuda.grid(1)
            if i < out.shape[0]:
                add_index(out, i)
                _twice_then_fail(float32(i), fail)
        return kernel, add_index

    kernel, add_index = make()
    out = np.zeros(40, np.float32)
    assert simulate(kernel, 2, 32, [("out", out), ("fail", False)]).fault is None
    assert out.tolist() == [2 * i + i % 32 for i in range(40)]
    trace = simulate(kernel, 2, 32, [("out", np.zeros(40, np.float32)), ("fail", True)])
    assert trace.fault.kind == "exception" and "asked to" in str(trace.fault)
    assert isinstance(globals()["_twice"], type(kernel))
    assert isinstance(globals()["_twice_then_fail"], type(kernel))
    cells = [c.cell_contents for c in kernel.py_func.__closure__]
    assert add_index in cells and all(not callable(c) or hasattr(c, "py_func") for c in cells)
