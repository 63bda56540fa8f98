"""One MPI rank of :func:`gemmlab.labs.run_mpi`: the student's all-reduce beside the course's
ring and MPI's own Allreduce, timed and checked as ``gemmlab allreduce`` does.

Run under ``mpiexec -n N python -m mpi4py -m gemmlab.labs.run_mpi_rank --source FILE --name NAME
...`` (:func:`gemmlab.labs.run_mpi` builds that command). Every rank runs the course's preamble
and the student's cell, wraps ``MPI.COMM_WORLD`` in :class:`MPIRankComm` (the same calls as the
simulated ranks' comm) and hands it to the student's function.
"""
import argparse
import importlib

import numpy as np
from mpi4py import MPI

from ..collectives.jobs import world
from ..collectives.mpi_allreduce import ALGORITHMS
from ..collectives.allreduce_mpi_rank import add_timing_arguments, measure, report
from ..judging import load_function

# A 1-D array of one of these dtypes travels as raw bytes, its dtype in the message tag; anything
# else is pickled (mpi4py's lowercase calls), which is slower but carries any shape.
_RAW_DTYPES = ("float32", "float64", "int32", "int64", "float16", "int16", "int8", "uint8")
_RAW_TAG, _PICKLE_TAG = 100, 99


class MPIRankComm:
    """``comm.rank``, ``comm.size``, send/recv/sendrecv (rendezvous, like the simulated ranks),
    all_reduce and all_gather, over an mpi4py communicator."""

    def __init__(self, comm):
        self._comm = comm
        self.rank = comm.Get_rank()
        self.size = comm.Get_size()

    @staticmethod
    def _raw(a):
        a = np.ascontiguousarray(a)
        if a.ndim == 1 and a.dtype.name in _RAW_DTYPES:
            return a, _RAW_TAG + _RAW_DTYPES.index(a.dtype.name)
        return a, _PICKLE_TAG

    def _isend(self, dst, a, synchronous):
        a, tag = self._raw(a)
        if tag == _PICKLE_TAG:
            return (self._comm.issend if synchronous else self._comm.isend)(a, dest=dst, tag=tag)
        start = self._comm.Issend if synchronous else self._comm.Isend
        return start([a, a.nbytes, MPI.BYTE], dest=dst, tag=tag)

    def send(self, dst, a):
        """A rendezvous, as on the simulated ranks: returns once dst has started receiving."""
        self._isend(dst, a, synchronous=True).wait()

    def recv(self, src):
        status = MPI.Status()
        self._comm.Probe(source=src, tag=MPI.ANY_TAG, status=status)
        tag = status.Get_tag()
        if tag == _PICKLE_TAG:
            return self._comm.recv(source=src, tag=tag)
        dtype = np.dtype(_RAW_DTYPES[tag - _RAW_TAG])
        out = np.empty(status.Get_count(MPI.BYTE) // dtype.itemsize, dtype=dtype)
        self._comm.Recv([out, out.nbytes, MPI.BYTE], source=src, tag=tag)
        return out

    def sendrecv(self, a, dst, src):
        request = self._isend(dst, a, synchronous=False)
        out = self.recv(src)
        request.wait()
        return out

    def all_reduce(self, a):
        """MPI's own Allreduce (sum), the same call as the "mpi" row of the table."""
        return ALGORITHMS["mpi"](self._comm, a)

    def all_gather(self, a, axis=-1):
        return np.concatenate(self._comm.allgather(np.asarray(a)), axis=axis)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    where = parser.add_mutually_exclusive_group(required=True)
    where.add_argument("--source", help="file holding the student's cell")
    where.add_argument("--module", help="or a module of the course that defines the function")
    parser.add_argument("--name", required=True, help="the function's name there")
    parser.add_argument("--size", type=int, required=True, help="bytes per rank")
    add_timing_arguments(parser)
    args = parser.parse_args(argv)
    comm = world()
    if args.module:
        student = getattr(importlib.import_module(args.module), args.name)
    else:
        with open(args.source, encoding="utf-8") as f:
            student = load_function(f.read(), args.name)
    mine = MPIRankComm(comm)
    table = {"yours": lambda c, buf: student(mine, buf.copy()),
             "ring": ALGORITHMS["ring"], "mpi": ALGORITHMS["mpi"]}
    dtype = np.dtype(args.dtype)
    results = measure(comm, list(table), args.size, dtype, args.repeats, args.warmup, args.seed,
                      table=table)
    report(comm, results, args.size, dtype)


if __name__ == "__main__":
    main()
