"""The figures of the runs on several GPUs (``gemmlab.viz.multigpu``), on made-up records."""
import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from gemmlab.viz import multigpu  # noqa: E402


def test_busbw_has_one_line_per_algorithm_in_size_order():
    records = [{"algorithm": a, "size_bytes": s, "busbw": bw * s / 2**20}
               for a, bw in (("ring", 1.0), ("nccl", 2.0), ("custom", 3.0))
               for s in (2**22, 2**20, 2**21)]
    ax = multigpu.plot_busbw(records, title="t")
    lines = ax.get_lines()
    assert [line.get_label() for line in lines] == ["our ring (CUDA graph)", "NCCL all-reduce",
                                                    "custom"]
    assert list(lines[1].get_xdata()) == [2**20, 2**21, 2**22]
    assert list(lines[1].get_ydata()) == [2.0, 4.0, 8.0]
    assert ax.get_xscale() == "log" and ax.get_title() == "t"
    plt.close(ax.figure)


def test_layer_times_stack_the_all_reduce_after_the_gemms():
    report = {"layer": "ffn", "dtype": "float16", "n_ranks": 2, "gemm_seconds": 2e-3,
              "allreduce_seconds": {"nccl": 1e-3, "ring_stepwise": 2e-3},
              "comm_share": {"nccl": 1 / 3, "ring_stepwise": 0.5}}
    ax = multigpu.plot_layer_times([report])
    gemm, comm = ax.patches[:2], ax.patches[2:]
    assert [p.get_width() for p in gemm] == [2.0, 2.0]                  # ms
    assert [(p.get_x(), p.get_width()) for p in comm] == [(2.0, 1.0), (2.0, 2.0)]
    assert [t.get_text().strip() for t in ax.texts] == ["33%", "50%"]
    assert "2 GPUs" in ax.get_title()
    plt.close(ax.figure)
