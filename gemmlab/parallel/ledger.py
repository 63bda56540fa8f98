"""The shape ledger of ``Y = X W`` split over p ranks: per-rank weight, input and local result,
and how the local results merge. Renders as a table in a notebook (``_repr_html_``).

A shrinking local width means column parallel (different output columns: concatenate); a full
local shape with incomplete values means row parallel (partial sums: add them up).
"""
from dataclasses import dataclass
from html import escape

from .sharding import COLUMN_SPLIT, ROW_SPLIT, check_ranks, require_divisible


@dataclass(frozen=True)
class LedgerRow:
    mode: str          # "column" or "row"
    W_r: tuple         # each rank's block of the math weight
    X_r: tuple         # what each rank multiplies it with (the whole X, or a block of it)
    local: tuple       # each rank's local result
    merge: str         # "concat" (along N) or "sum" (elementwise over ranks)
    collective: str    # what to call when every rank needs the whole Y

    @property
    def input_note(self):
        return "whole X on every rank" if self.mode == "column" else "X cut along K"


def _shape(value, name):
    shape = getattr(value, "shape", value)
    if not (isinstance(shape, tuple) and len(shape) == 2 and all(
            isinstance(n, int) and n >= 1 for n in shape)):
        raise ValueError(f"{name} must be a matrix or its shape (rows, columns) of positive whole "
                         f"numbers, got {value!r}")
    return shape


class ShapeLedger:
    """Per-rank shapes for column and row parallel ``Y = X W`` (X: M x K, W: K x N) on p ranks.

    ``ledger["column"].W_r`` -> ``(K, N // p)``, ``ledger["row"].merge`` -> ``"sum"``.
    """

    def __init__(self, x_shape, w_shape, p):
        (M, K), (K2, N) = _shape(x_shape, "x_shape"), _shape(w_shape, "w_shape")
        if K != K2:
            raise ValueError(f"X is {M}x{K} and W is {K2}x{N}: X's columns must equal W's rows "
                             f"(the contraction dimension K)")
        p = check_ranks(p)
        require_divisible(N, p, *COLUMN_SPLIT)
        require_divisible(K, p, *ROW_SPLIT)
        self.M, self.K, self.N, self.p = M, K, N, p
        self.rows = (
            LedgerRow("column", (K, N // p), (M, K), (M, N // p), "concat", "all-gather"),
            LedgerRow("row", (K // p, N), (M, K // p), (M, N), "sum", "all-reduce"),
        )

    def __getitem__(self, mode):
        for row in self.rows:
            if row.mode == mode:
                return row
        raise KeyError(f"no mode {mode!r} in the ledger: use 'column' or 'row'")

    _HEADER = ("mode", "W_r", "X or X_r", "local result", "merge", "if every rank needs Y")

    def _cells(self, row):
        shape = "{}x{}".format
        merge = "concat along N" if row.merge == "concat" else "sum over ranks"
        return (f"{row.mode} parallel", shape(*row.W_r), f"{shape(*row.X_r)} ({row.input_note})",
                shape(*row.local), merge, row.collective)

    def __str__(self):
        table = [self._HEADER] + [self._cells(r) for r in self.rows]
        widths = [max(len(line[i]) for line in table) for i in range(len(self._HEADER))]
        lines = ["  ".join(c.ljust(w) for c, w in zip(line, widths, strict=True)).rstrip()
                 for line in table]
        title = f"Y = X W with X {self.M}x{self.K}, W {self.K}x{self.N}, on p = {self.p} ranks"
        return "\n".join([title] + lines)

    def __repr__(self):
        return f"ShapeLedger(x_shape=({self.M}, {self.K}), w_shape=({self.K}, {self.N}), p={self.p})"

    def _repr_html_(self):
        head = "".join(f"<th>{escape(h)}</th>" for h in self._HEADER)
        body = "".join("<tr>" + "".join(f"<td>{escape(c)}</td>" for c in self._cells(r)) + "</tr>"
                       for r in self.rows)
        caption = escape(f"Y = X W with X {self.M}x{self.K}, W {self.K}x{self.N}, "
                         f"on p = {self.p} ranks")
        return f"<table><caption>{caption}</caption><tr>{head}</tr>{body}</table>"


def shape_ledger(x_shape, w_shape, p):
    """The :class:`ShapeLedger` of ``Y = X W``; give the arrays or their shapes."""
    return ShapeLedger(x_shape, w_shape, p)
