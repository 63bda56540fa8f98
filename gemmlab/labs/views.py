"""Slices and dynamic shared memory for the instrumented simulator: arrays that are views of
another array's elements, tracked like the array's own.

- :func:`slice_of` is what ``a[i:]``, ``s[0:8]``, ``t[i, :]`` (a row of a 2-D array) and the
  like return inside a kernel: a :class:`View` whose elements are elements of the array it was cut
  from, so every read and write through it is counted, checked for races and bounds, and shown,
  as an access of that array.
- A block's dynamic shared memory is the bytes the launch asked for (``kernel[grid, block,
  stream, nbytes]``), tracked byte by byte (``simulator.DynamicBytes``). Every
  ``cuda.shared.array(0, dtype)`` is a :class:`Reinterpreted` view of those same bytes from
  offset 0, as on the GPU, so two such arrays alias, and a race through one of them on bytes the
  other touched is reported as the race it is, naming both arrays.
"""
import sys

import numpy as np

def slice_of(array, index):
    """The view ``array[index]`` (``index`` has a slice; missing trailing indices count as
    whole slices, as in NumPy)."""
    return View(array.base_of(), array.units_of()[_checked_key(array, index)],
                f"{array.name}[{_key_text(index)}]")


def _checked_key(array, index):
    """``index`` with every whole number inside its dimension (a view never wraps around)."""
    key = index if type(index) is tuple else (index,)
    for i, dim in zip(key, array.shape, strict=False):
        if type(i) is slice:
            if i.step == 0:
                array.launch.fail("index", f"{array.launch.who()} sliced {array.name} with "
                                  f"step 0: a slice's step must not be 0")
            continue
        if not 0 <= int(i) < dim:
            array.launch.out_of_bounds(array, "sliced", key)
    return key


def _key_text(index):
    key = index if type(index) is tuple else (index,)
    return ", ".join(_part_text(i) for i in key)


def _part_text(i):
    if type(i) is not slice:
        return str(int(i))
    text = ("" if i.start is None else str(i.start)) + ":" + ("" if i.stop is None else
                                                              str(i.stop))
    return text + ("" if i.step is None else f":{i.step}")


class Elements:
    """Indexing in terms of ``unit(index, action)`` (the element's number, or -1 for an index
    with a slice), ``read_unit(e, line)`` and ``write_unit(e, value, line)``: a slice makes a
    view, a whole index reads or writes one tracked element at the kernel's line."""
    __slots__ = ()

    def __getitem__(self, index):
        e = self.unit(index, "read")
        if e < 0:
            return slice_of(self, index)
        return self.read_unit(e, sys._getframe(1).f_lineno)

    def __setitem__(self, index, value):
        e = self.unit(index, "wrote")
        if e < 0:
            slice_of(self, index).assign(value, sys._getframe(1).f_lineno)
        else:
            self.write_unit(e, value, sys._getframe(1).f_lineno)


class View(Elements):
    """Elements of ``base`` (a tracked array) in the shape of ``units`` (the base's row-major
    element numbers): a slice, read and written through the base's own tracking."""

    def __init__(self, base, units, name):
        self.base, self.units, self.name = base, units, name
        self.launch, self.dtype = base.launch, base.dtype
        self.shape, self.ndim, self.size = units.shape, units.ndim, units.size

    def __len__(self):
        return self.shape[0]

    def base_of(self):
        return self.base

    def units_of(self):
        return self.units

    def unit(self, index, action):
        """The base's element at ``index``, or -1 when ``index`` takes a view."""
        key = index if type(index) is tuple else (index,)
        if any(type(i) is slice for i in key):
            return -1
        if len(key) != self.ndim:
            self.launch.fail("index", f"{self.launch.who()} indexed {self.name} with "
                             f"{len(key)} indices, but it has {self.ndim} dimension(s)")
        if not all(0 <= int(i) < d for i, d in zip(key, self.shape, strict=True)):
            self.launch.out_of_bounds(self, action, key)
        return int(self.units[key])

    def read_unit(self, e, line):
        return self.base.read_unit(e, line)

    def write_unit(self, e, value, line):
        self.base.write_unit(e, value, line)

    def assign(self, value, line):
        """``view[...] = value`` (a slice assignment): one write per element, in order."""
        values = np.broadcast_to(np.asarray(value), self.shape).reshape(-1)
        for e, v in zip(self.units.reshape(-1), values, strict=True):
            self.base.write_unit(int(e), v, line)


class Reinterpreted(Elements):
    """A dynamic shared array: elements of ``dtype`` laid over the block's dynamic bytes from
    offset 0; each access checks every byte it covers (so arrays of two types alias as on the GPU)
    and a report names the element of this array, and of the other array when it differs."""

    def __init__(self, memory, dtype, count, name):
        self.memory, self.dtype, self.name = memory, dtype, name
        self.launch = memory.launch
        self.shape, self.ndim, self.size = (count,), 1, count

    def __len__(self):
        return self.size

    def base_of(self):
        return self

    def units_of(self):
        return np.arange(self.size)

    def unit(self, index, action):
        key = index if type(index) is tuple else (index,)
        if any(type(i) is slice for i in key):
            return -1
        if len(key) != 1:
            self.launch.fail("index", f"{self.launch.who()} indexed {self.name} with "
                             f"{len(key)} indices, but it has 1 dimension")
        if not 0 <= int(key[0]) < self.size:
            self.launch.out_of_bounds(self, action, key)
        return int(key[0])

    def _bytes(self, k):
        size = self.dtype.itemsize
        return range(k * size, (k + 1) * size)

    def read_unit(self, k, line):
        memory, launch = self.memory, self.launch
        t, now = launch.current.local_id, launch.interval
        memory.viewing = (self.name, k)
        launch.recorder.access(t, now, "r", self.name, k)
        for b in self._bytes(k):
            memory.check_read(b, t, now, line, launch.in_atomic)
            memory.r_label[b] = (self.name, k)
        span = self._bytes(k)
        self.launch.count_shared_read(self.name)
        return memory._flat_data[span.start:span.stop].view(self.dtype)[0]

    def write_unit(self, k, value, line):
        memory, launch = self.memory, self.launch
        t, now = launch.current.local_id, launch.interval
        new = np.asarray(value, self.dtype).reshape(1).view(np.uint8)
        memory.viewing = (self.name, k)
        span = self._bytes(k)
        launch.recorder.access(t, now, "w", self.name, k)
        for i, b in enumerate(span):
            memory.check_write(b, t, now, line, launch.in_atomic,
                               lambda b=b, i=i: memory._flat_data[b] != new[i])
            memory.w_label[b] = (self.name, k)
        memory._flat_data[span.start:span.stop] = new

    def assign(self, value, line):
        values = np.broadcast_to(np.asarray(value), self.shape).reshape(-1)
        for k, v in enumerate(values):
            self.write_unit(k, v, line)
