"""Compare two ``gemmlab bench`` JSON files kernel by kernel: TFLOP/s before, after, and the ratio.

    python benchmarks/compare_runs.py gpu_ladder.json /path/to/new/gpu_ladder.json

A bare file name is read from benchmarks/ (``gl.measure.recorded``). Rows are matched on kernel,
tiles and shape; each file's cuBLAS row is listed too, so drift of the machine shows beside the
kernels' changes.
"""
import sys

import gemmlab as gl


def _by_key(path):
    run = gl.measure.recorded(path, required=("machine", "results"))
    if run is None:
        raise SystemExit(f"{path}: no such file")
    return {(r["kernel"], str(sorted(r["tiles"].items())), (r["M"], r["N"], r["K"])): r["tflops"]
            for r in run["results"]}


def main(argv):
    if len(argv) != 2:
        raise SystemExit(__doc__)
    before, after = (_by_key(path) for path in argv)
    print(f"{'kernel':<10} {'M x N x K':>16} {'before':>8} {'after':>8} {'after/before':>12}  tiles")
    for key in sorted(before.keys() & after.keys(), key=lambda k: (k[2], k[0], k[1])):
        kernel, tiles, shape = key
        print(f"{kernel:<10} {'x'.join(map(str, shape)):>16} {before[key]:>8.3g} {after[key]:>8.3g} "
              f"{after[key] / before[key]:>12.2f}  {tiles}")
    for name, keys in (("only before", before.keys() - after.keys()),
                       ("only after", after.keys() - before.keys())):
        if keys:
            print(f"{name}: {sorted(keys)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
