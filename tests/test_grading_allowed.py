"""What a code answer may do, per question (grading/allowed.py's declarations, judged by
judging/allow.py): an answer handed ``np`` may also write ``import numpy as np`` (it gives the
same np), as a notebook cell often does; other imports stay refused, naming the rule."""
from gemmlab.grading import allowed
from gemmlab.grading.bank import get_question
from gemmlab.grading.checker import judge_cell_here
from gemmlab.grading.reveal import worked_answer
from gemmlab.judging.allow import PLAIN, refused


def test_a_correct_ring_that_imports_numpy_passes():
    q = get_question("07.lab_ring")
    worked = worked_answer(q)
    assert worked and "def ring_allreduce" in worked
    status, feedback, _ = judge_cell_here(q, "import numpy as np\n\n" + worked, "ring_allreduce")
    assert status == "pass", feedback
    assert "grants these imports only" not in feedback


def test_other_imports_stay_refused():
    ring = allowed.ALLOWS["07.lab_ring"]
    assert refused(ring, "import numpy as np\nx = np.zeros(3)") is None
    assert "imports numpy" in refused(ring, "import numpy")         # only as the np handed out
    assert "imports os" in refused(ring, "import os")
    assert "imports numpy" in refused(PLAIN, "import numpy as np")  # no np handed: no numpy
