"""A solution kernel with text edits: how the labs' and puzzles' tests build each typical mistake
from the course's own solution (test_labs_puzzles.py, test_labs_kernel_lab.py,
test_labs_attention_lab.py), so that a broken kernel differs from the right one by its mistake
alone."""
from gemmlab.judging import load_function
from gemmlab.labs.solutions import cell


def edited(qid, *edits):
    """(source, name, label) of the solution kernel of ``qid`` with each (old, new) text edit
    applied exactly once (benchmarks/lab_attacks_gpu.py runs some of them on a GPU)."""
    source, name, label = cell(qid)
    for old, new in edits:
        assert source.count(old) == 1, f"{old!r} is not in the solution of {qid} exactly once"
        source = source.replace(old, new)
    return source, name, label


def variant(qid, *edits):
    """The solution kernel of ``qid`` with each (old, new) text edit applied exactly once."""
    source, name, label = edited(qid, *edits)
    return load_function(source, name, f"{label} (edited: {abs(hash(edits))})")
