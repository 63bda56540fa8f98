"""A thread's ``cuda.local.array`` on the simulator: a read of an element the thread never wrote
is a fault, as for shared memory (issue 54, item 2).

On a GPU a local array lives in registers (or local memory) that start with whatever they held,
so such a read is garbage that changes from run to run. The array is a NumPy array of a subclass
whose reads are checked:

- a float array (:class:`FloatLocal`) starts filled with a NaN of a payload no arithmetic makes
  (:data:`UNDEFINED`), and a read that finds those bits reads an element nobody wrote. Its writes
  stay NumPy's own: a register-blocked kernel writes its registers millions of times. (A NaN made
  from that one keeps the payload, but the first read has already stopped the run.)
- any other array (integers, booleans: :class:`MaskedLocal`) keeps a mask of the elements
  written, set by its writes.

A read costs 0.28 us instead of NumPy's 0.07 (one Python call): 0.3-0.4 s of 10.lab_outer's check.
"""
import numpy as np

UNDEFINED = {np.dtype(np.float16): np.uint16(0x7E5D),
             np.dtype(np.float32): np.uint32(0x7FC0DEAD),
             np.dtype(np.float64): np.uint64(0x7FF80000DEADBEEF)}
_get, _set = np.ndarray.__getitem__, np.ndarray.__setitem__


class _Local(np.ndarray):
    """One thread's local array. ``fault(array, index)`` is called, with this array and the
    index read (a tuple), at a read of an element nobody wrote; ``site`` is where the array was
    made ((code, offset) of the ``cuda.local.array`` call), for its name in that report;
    ``prefix``: the indices that made a view (``acc[i]`` of ``acc``)."""

    def __array_finalize__(self, source):
        self.fault = getattr(source, "fault", None)
        self.site = getattr(source, "site", None)
        self.prefix = ()

    def _view(self, view, index):
        view.prefix = self.prefix + _as_tuple(index)
        return view


class FloatLocal(_Local):
    """A float local array: undefined elements hold the NaN of :data:`UNDEFINED`."""

    def __getitem__(self, index):
        value = _get(self, index)
        if type(value) is FloatLocal:
            return self._view(value, index)
        if value == value:
            return value
        bits = UNDEFINED[self.dtype]
        if value.view(bits.dtype) == bits:
            self.fault(self, self.prefix + _as_tuple(index))
        return value


class MaskedLocal(_Local):
    """An integer or boolean local array, with the mask of the elements written."""

    def __array_finalize__(self, source):
        super().__array_finalize__(source)
        self.written = getattr(source, "written", None)     # (a view's own is set by the read)

    def __getitem__(self, index):
        value = _get(self, index)
        if isinstance(value, np.ndarray):
            view = self._view(value, index)
            view.written = self.written[index]
            return view
        if not self.written[index]:
            self.fault(self, self.prefix + _as_tuple(index))
        return value

    def __setitem__(self, index, value):
        _set(self, index, value)
        self.written[index] = True


def _as_tuple(index):
    return index if type(index) is tuple else (index,)


def local_array(garbage, fault, site):
    """A local array made from the ``garbage`` NumPy array the launch made for it."""
    bits = UNDEFINED.get(garbage.dtype)
    array = garbage.view(FloatLocal if bits is not None else MaskedLocal)
    array.fault, array.site = fault, site
    if bits is not None:
        garbage.view(bits.dtype)[...] = bits
    else:
        array.written = np.zeros(garbage.shape, dtype=bool)
    return array
