"""Mistakes recognised from a wrong result alone: what a GEMM lab's C equals when a shared tile is
indexed the wrong way round (lab 05 and its successors), or when a WMMA fragment is loaded or
stored at the wrong tile (lab 12). Without these, such a kernel only hears that every element is
wrong.

Each function rebuilds, in float64, the result the mistake would give on the same inputs, and
returns the sentence that names it when the student's C is that result (None otherwise).
"""
import itertools

import numpy as np

FRAG = 16


def _padded(X, tile):
    return np.pad(X, ((0, -X.shape[0] % tile), (0, -X.shape[1] % tile)))


def _tiles_transposed(X, tile):
    """X padded with zeros to whole tiles, each tile transposed in place."""
    P = _padded(X, tile)
    r, c = P.shape[0] // tile, P.shape[1] // tile
    return P.reshape(r, tile, c, tile).transpose(0, 3, 2, 1).reshape(P.shape)


def shared_index_swapped(A, B, C, tile, rtol=1e-4, atol=1e-4):
    """A sentence when ``C`` is what a tiled kernel gives with the two indices of its shared tile
    of A (or B, or both) swapped, in the store or in the read: sA[tx, ty] for sA[ty, tx]."""
    A, B = A.astype(np.float64), B.astype(np.float64)
    M, N = A.shape[0], B.shape[1]
    plain = (_padded(A, tile), _padded(B, tile))
    swapped = (_tiles_transposed(A, tile), _tiles_transposed(B, tile))
    for which, (a, b) in (("A", (swapped[0], plain[1])), ("B", (plain[0], swapped[1])),
                          ("A and of B", swapped)):
        if a.shape[1] != b.shape[0]:
            continue
        other = (a @ b)[:M, :N]
        if other.shape == C.shape and np.allclose(C, other, rtol=rtol, atol=atol):
            return (f"the result is what a kernel gives whose shared tile of {which} has its "
                    f"two indices swapped (row and column of the tile exchanged, in the store "
                    f"into shared memory or in the read from it): every tile of {which[0]} is "
                    f"used transposed. The thread (threadIdx.x, threadIdx.y) stores at row "
                    f"threadIdx.y, column threadIdx.x of the tile, and the multiply-adds read "
                    f"the A tile along a row and the B tile down a column.")
    return None


def _fragment_product(A, B, load_a, load_b, store, shape):
    """C as a fragment loop computes it with A's fragment loaded at ``load_a`` (a pair of the
    loop indices "i", "j", "k"), B's at ``load_b`` and C's stored at ``store``; None when one
    of those origins falls outside its matrix."""
    Ap, Bp = _padded(A, FRAG), _padded(B, FRAG)
    M, N = shape
    Mp, Np, Kp = -(-M // FRAG) * FRAG, -(-N // FRAG) * FRAG, Ap.shape[1]
    out = np.zeros((max(Mp, Np), max(Mp, Np)))
    written = np.zeros(out.shape, bool)
    for i, j, k in itertools.product(range(0, Mp, FRAG), range(0, Np, FRAG), range(0, Kp, FRAG)):
        at = {"i": i, "j": j, "k": k}
        (ar, ac), (br, bc), (cr, cc) = ([at[x] for x in pair] for pair in (load_a, load_b, store))
        if ar >= Ap.shape[0] or ac >= Ap.shape[1] or br >= Bp.shape[0] or bc >= Bp.shape[1]:
            return None
        out[cr:cr + FRAG, cc:cc + FRAG] += (Ap[ar:ar + FRAG, ac:ac + FRAG]
                                            @ Bp[br:br + FRAG, bc:bc + FRAG])
        written[cr:cr + FRAG, cc:cc + FRAG] = True
    return out[:M, :N] if written[:M, :N].all() else None


def wrong_fragment_tile(A, B, C, rtol=1e-3, atol=1e-3):
    """A sentence when ``C`` is what the WMMA lab's loop gives with a fragment loaded or stored
    at the wrong tile: A's at (k, i) instead of (i, k), B's at (j, k) instead of (k, j), C's
    stored at (j, i), and the other mix-ups of the loop indices."""
    A, B = A.astype(np.float64), B.astype(np.float64)
    product = A @ B
    right = (("i", "k"), ("k", "j"), ("i", "j"))
    pairs = list(itertools.product("ijk", repeat=2))
    for load_a, load_b, store in itertools.product(pairs, pairs, (("i", "j"), ("j", "i"))):
        if (load_a, load_b, store) == right:
            continue
        other = _fragment_product(A, B, load_a, load_b, store, C.shape)
        if other is None or np.allclose(other, product, rtol=rtol, atol=atol):
            continue                # the loop's i and j renamed: the right product
        if np.allclose(C, other, rtol=rtol, atol=atol):
            wrong = [f"{name}'s fragment {verb} at ({', '.join(got)}) instead of "
                     f"({', '.join(want)})" for name, verb, got, want in
                     zip("ABC", ("loaded", "loaded", "stored"), (load_a, load_b, store), right,
                         strict=True) if got != want]
            return (f"the result is what the loop gives with {' and '.join(wrong)}, for C's "
                    f"fragment at (i, j) and the step k along K: each 16 x 16 tile of C then "
                    f"sums the products of other tiles. The fragment of A comes from rows i, "
                    f"columns k; the fragment of B from rows k, columns j; the sum goes to C at "
                    f"rows i, columns j.")
    return None
