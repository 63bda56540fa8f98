"""The picture of a kernel's block (gemmlab/viz/kernel.py), drawn from plain data alone: what it
marks read and written, the barriers, the threads and element at fault, when it is drawn unasked,
and that it refuses data that does not hold together."""
import json
import re

import pytest

from gemmlab.viz import kernel


def picture(accesses, fault=None, race=None, dims=(8, 1, 1), barriers=("line 9 (`sync`)",),
            arrays=(("a", "global", [20]), ("s", "shared", [8]))):
    """Plain data as the simulator sends it: accesses as (thread, interval, write, array, element)."""
    threads, intervals, writes, which, elements = zip(*accesses, strict=True) if accesses else ([],) * 5
    return {"block": [2, 0, 0], "block_dims": list(dims), "block_ndim": 1, "grid": [3, 1, 1],
            "grid_ndim": 1, "lab": "demo", "case": "n = 20",
            "arrays": [{"name": n, "space": s, "shape": d} for n, s, d in arrays],
            "accesses": {"thread": list(threads), "interval": list(intervals),
                         "write": list(writes), "array": list(which), "element": list(elements)},
            "barriers": list(barriers), "fault": fault, "race": race, "truncated": False}


LOAD_THEN_SHIFT = [(t, 0, 0, 0, 16 + t) for t in range(4)] + [(t, 0, 1, 1, t) for t in range(8)] \
    + [(t, 1, 0, 1, (t + 1) % 8) for t in range(8)]


def classes(svg, name):
    return len(re.findall(rf'class="{name}"', svg))


def test_each_access_of_each_shown_thread_is_one_coloured_cell_and_each_barrier_a_line():
    drawn = kernel.draw(json.loads(json.dumps(picture(LOAD_THEN_SHIFT))))
    assert classes(drawn.svg, "kp-read") == 4 + 8 and classes(drawn.svg, "kp-write") == 8
    assert classes(drawn.svg, "kp-barrier") == 1 and "kp-fault" not in drawn.svg
    assert "demo n = 20: block 2 of a 3 grid, 8 threads (8 shown)" in drawn.text
    assert "2 barrier interval(s)" in drawn.text
    assert drawn._repr_html_().startswith('<div class="gemmlab-kernel-picture"')
    assert "a[16:20]" in drawn.svg and "s[0:8]" in drawn.svg


def test_an_element_read_and_written_by_one_thread_is_marked_both():
    drawn = kernel.draw(picture([(0, 0, 0, 1, 3), (0, 0, 1, 1, 3)]))
    assert classes(drawn.svg, "kp-both") == 1 and classes(drawn.svg, "kp-read") == 0


def test_a_race_marks_both_threads_and_the_element_and_is_drawn_unasked():
    race = {"kind": "read-write", "array": "s", "index": [1], "threads": [0, 1], "interval": 0}
    data = picture([(0, 0, 1, 1, 0), (0, 0, 0, 1, 1), (1, 0, 1, 1, 1)], race=race, barriers=())
    drawn = kernel.draw(data)
    assert classes(drawn.svg, "kp-thread kp-fault") == 2 and classes(drawn.svg, "kp-fault kp-panel") == 2
    assert classes(drawn.svg, "kp-fault kp-element") == 2      # s[1], in both threads' panels
    assert "t0 and t1 raced: s[1] in interval 0" in drawn.text
    assert kernel.needs_attention(data) and not kernel.needs_attention(picture(LOAD_THEN_SHIFT))


def test_an_out_of_bounds_element_is_drawn_past_the_end_of_its_array():
    fault = {"kind": "out of bounds", "message": "thread 4 of block 2 read a[20], outside ...",
             "thread": 4, "array": "a", "index": [20], "action": "read"}
    drawn = kernel.draw(picture([(t, 0, 0, 0, 16 + t) for t in range(4)], fault=fault, barriers=()))
    assert classes(drawn.svg, "kp-fault kp-element") == 1
    assert "a[16:21]" in drawn.svg and 'stroke-dasharray="2,1"' in drawn.svg   # 20 is outside
    assert "thread 4 of block 2 read a[20]" in drawn.text
    assert kernel.needs_attention(picture([], fault=fault))
    timeout = dict(fault, kind="timeout", index=None, array=None)
    assert not kernel.needs_attention(picture([], fault=timeout))


def test_a_large_block_shows_sixteen_threads_those_at_fault_first():
    fault = {"kind": "out of bounds", "message": "m", "thread": 200, "array": "a", "index": [20],
             "action": "read"}
    data = picture([(t, 0, 0, 0, t % 20) for t in range(256)], fault=fault, dims=(256, 1, 1),
                   barriers=())
    drawn = kernel.draw(data)
    shown = re.findall(r'class="kp-thread[^"]*"[^>]*>(t\d+)<', drawn.svg)
    assert shown == [f"t{t}" for t in range(15)] + ["t200"]


def test_only_eight_intervals_are_drawn_around_the_one_at_fault():
    race = {"kind": "read-write", "array": "s", "index": [0], "threads": [0, 1], "interval": 11}
    data = picture([(0, i, 1, 1, 0) for i in range(13)], race=race,
                   barriers=[f"line {i}" for i in range(12)])
    drawn = kernel.draw(data)
    assert classes(drawn.svg, "kp-barrier") == 7 and "intervals 5-12 drawn" in drawn.text


def test_names_from_the_data_are_escaped_and_broken_data_is_refused():
    data = picture([(0, 0, 0, 0, 1)], arrays=(("<script>", "global", [4]),))
    assert "<script>" not in kernel.draw(data).svg and "&lt;script&gt;" in kernel.draw(data).svg
    broken = picture(LOAD_THEN_SHIFT)
    broken["accesses"]["element"].pop()
    with pytest.raises(ValueError, match="differ in length"):
        kernel.draw(broken)


def test_display_draws_when_asked_or_when_something_needs_attention(monkeypatch):
    import IPython
    import IPython.display
    shown = []
    monkeypatch.setattr(IPython, "get_ipython", lambda: object())
    monkeypatch.setattr(IPython.display, "display", shown.append)
    kernel.display_picture(picture(LOAD_THEN_SHIFT))
    assert shown == []
    kernel.display_picture(picture(LOAD_THEN_SHIFT), show=True)
    race = {"kind": "unwritten", "array": "s", "index": [1], "threads": [0, None], "interval": 0}
    kernel.display_picture(picture(LOAD_THEN_SHIFT, race=race))
    assert [type(p).__name__ for p in shown] == ["KernelPicture", "KernelPicture"]
    assert "t0 read a slot nobody had written: s[1]" in shown[1].text
