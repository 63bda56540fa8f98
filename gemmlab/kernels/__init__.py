"""The GEMM kernel ladder in numba.cuda, one module per rung, its registry and its entry point.

Each rung computes ``C_out = alpha A B + beta C_in`` on float32 row-major matrices of any shape;
its file holds the kernel, its tile constants and their defaults (``TILES``: small on the
simulator, large on a GPU), and reads top to bottom; ``_common`` (signature, launch plan) and
``_blocked`` (how the register-blocked rungs move tiles) hold what is no lesson's point.
``rungs`` lists the rungs in the order the lessons teach them; ``launch.gemm`` (also
``gl.gemm``) checks inputs, picks a rung and launches it. Beside the ladder, not rungs: ``cpu``
(the CPU baselines of lessons 02 and 04) and ``cpubench`` (``gemmlab bench --cpu``), and
``accumulate`` (lesson 01's device kernel summing in FP16 or FP32).

    >>> gl.kernels.names()
    ['naive', 'tiled', 'pingpong', 'outer', 'twolevel']
    >>> gl.kernels.show_step("pingpong", "k_tile")      # the code of one named step
"""
from ._common import warp_patch  # noqa: F401  (public: lesson 11's shared-memory model uses it)
from .rungs import LADDER, Rung, get, names, show_step  # noqa: F401
from .launch import gemm  # noqa: F401
