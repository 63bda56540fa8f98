"""The busbw-vs-size figure of benchmarks/RESULTS.md, made from the recorded sweep.

    python benchmarks/plot_multi.py [SWEEP_JSON] [PNG]

Defaults: benchmarks/nccl_h200x2_allreduce.json -> benchmarks/nccl_h200x2_busbw.png. The figure
is ``gemmlab.viz.multigpu.plot_busbw``, the one lesson 07 draws.
"""
import json
import sys
from pathlib import Path

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402  (after choosing the file-only backend)

from gemmlab.collectives.recorded import label  # noqa: E402
from gemmlab.viz.multigpu import plot_busbw  # noqa: E402

HERE = Path(__file__).resolve().parent


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    source = Path(argv[0]) if argv else HERE / "nccl_h200x2_allreduce.json"
    target = Path(argv[1]) if len(argv) > 1 else HERE / "nccl_h200x2_busbw.png"
    records = json.loads(source.read_text(encoding="utf-8"))
    ax = plot_busbw(records, title=f"All-reduce, reduce-scatter, all-gather: {label(records[0])}")
    ax.figure.tight_layout()
    ax.figure.savefig(target, dpi=110)
    plt.close(ax.figure)
    print(f"wrote {target}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
