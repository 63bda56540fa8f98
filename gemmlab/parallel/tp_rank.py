"""One rank of ``gemmlab tp``: started by :func:`gemmlab.parallel.tp.run_layer` through the one
launcher (``gemmlab.collectives.jobs``); rank 0 emits the report.

``--backend mpi`` runs :func:`gemmlab.parallel.tp_mpi_rank.rank_main` on this CPU process; ``--backend
nccl`` joins an NCCL communicator on this process's GPU and runs
:func:`gemmlab.parallel.tp_nccl_rank.rank_report`.
"""
import argparse

from ..collectives import jobs
from .tp import BACKENDS, LAYERS


def _parser():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backend", choices=BACKENDS, required=True)
    parser.add_argument("--layer", choices=LAYERS, required=True)
    parser.add_argument("--tokens", type=int, required=True)
    parser.add_argument("--d-model", type=int, required=True, dest="d_model")
    parser.add_argument("--heads", type=int, default=None)
    parser.add_argument("--kv-heads", type=int, default=None, dest="kv_heads")
    parser.add_argument("--dtype", default="float32")
    parser.add_argument("--algos", default=None)
    parser.add_argument("--causal", action="store_true")
    parser.add_argument("--bias", action="store_true")
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--iters", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    return parser


def main(argv=None):
    args = _parser().parse_args(argv)
    comm = jobs.world()
    if args.backend == "mpi":
        from .tp_mpi_rank import rank_main
        report = rank_main(comm, args)
    else:
        from ..collectives.nccl import connect
        from .tp_nccl_rank import rank_report
        transport = connect(comm)
        try:
            report = rank_report(transport, comm, args)
        finally:
            transport.close()
    if report is not None:
        jobs.emit(report)


if __name__ == "__main__":
    main()
