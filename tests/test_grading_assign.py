"""`gemmlab assign`: solution blocks become placeholders; exercises/ matches solutions/; a student's
work is never overwritten or deleted."""
import nbformat
import pytest
from nbformat.v4 import new_code_cell, new_markdown_cell, new_notebook

from gemmlab.grading import assign
from gemmlab.grading.assign import SolutionMarkerError, strip_source


def test_assignments_become_named_placeholders():
    src = "### BEGIN SOLUTION\nx = 1\na, (b, c) = 1, (2, 3)\ny += 2\n### END SOLUTION\ncheck('q', x)"
    assert strip_source(src).split("\n") == [
        "# YOUR CODE HERE", "x = ...", "a = ...", "b = ...", "c = ...", "y = ...", "check('q', x)"]


def test_stores_into_arrays_and_attributes_are_not_placeholders():
    # A kernel's body fills shared arrays (sA[ty, tx] = a): a placeholder `sA = ...` would
    # shadow the skeleton's own sA and tell the student to reassign it.
    src = ("def k(A):\n    sA = make()\n    ### BEGIN SOLUTION\n    sA[0, t] = A[0]\n"
           "    A.flag = 1\n    acc = 0\n    ### END SOLUTION")
    assert strip_source(src) == "def k(A):\n    sA = make()\n    # YOUR CODE HERE\n    acc = ..."


def test_a_returning_block_keeps_its_indent():
    src = "def f(v):\n    ### BEGIN SOLUTION\n    s = sum(v)\n    return s\n    ### END SOLUTION"
    assert strip_source(src) == "def f(v):\n    # YOUR CODE HERE\n    return ..."


def test_a_block_without_names_becomes_ellipsis():
    assert strip_source("### BEGIN SOLUTION\nprint(1)\n### END SOLUTION") == "# YOUR CODE HERE\n..."


def test_markdown_answers_are_blanked():
    src = "Why?\n### BEGIN SOLUTION\nBecause.\n### END SOLUTION"
    assert strip_source(src, "markdown") == "Why?\n_Your answer here._"


@pytest.mark.parametrize("src, message", [
    ("### BEGIN SOLUTION\nx = 1", "never closed"),
    ("x = 1\n### END SOLUTION", "without"),
    ("### BEGIN SOLUTION\n### BEGIN SOLUTION\n### END SOLUTION", "inside"),
    ("### BEGIN SOLUTION\nx = (\n### END SOLUTION", "not valid Python"),
])
def test_broken_markers_are_reported(src, message):
    with pytest.raises(SolutionMarkerError, match=message):
        strip_source(src, where="nb, cell 1")


def _solution_notebook(path):
    nb = new_notebook(cells=[new_markdown_cell("# Title"),
                             new_code_cell("### BEGIN SOLUTION\nanswer = 42\n### END SOLUTION",
                                           execution_count=3,
                                           outputs=[nbformat.v4.new_output("stream", text="x")])])
    nbformat.write(nb, path)


def test_main_writes_then_check_passes_then_detects_staleness(tmp_path, capsys):
    sol, ex = tmp_path / "solutions", tmp_path / "exercises"
    sol.mkdir()
    _solution_notebook(sol / "01_x.ipynb")
    assert assign.main(sol, ex, check_only=True) == 1
    assert assign.main(sol, ex) == 0
    generated = nbformat.read(ex / "01_x.ipynb", as_version=4)
    code = generated.cells[1]
    assert code.source == "# YOUR CODE HERE\nanswer = ..."
    assert code.outputs == [] and code.execution_count is None
    assert assign.main(sol, ex, check_only=True) == 0
    nb = nbformat.read(sol / "01_x.ipynb", as_version=4)
    nb.cells.append(new_markdown_cell("More."))
    nbformat.write(nb, sol / "01_x.ipynb")
    assert assign.main(sol, ex, check_only=True) == 1
    assert "stale: " in capsys.readouterr().out
    assert assign.main(sol, ex) == 0                       # untouched since written: replaced
    assert nbformat.read(ex / "01_x.ipynb", as_version=4).cells[-1].source == "More."


def _student_answers(path):
    nb = nbformat.read(path, as_version=4)
    nb.cells[1].source = "answer = 42   # mine"
    nbformat.write(nb, path)
    return path.read_bytes()


def test_a_students_answers_are_never_overwritten_without_force(tmp_path, capsys):
    sol, ex = tmp_path / "solutions", tmp_path / "exercises"
    sol.mkdir()
    _solution_notebook(sol / "01_x.ipynb")
    assign.main(sol, ex)
    mine = _student_answers(ex / "01_x.ipynb")
    assert assign.main(sol, ex) == 1
    err = capsys.readouterr().err
    assert "changed since gemmlab assign wrote it" in err and "--force" in err
    assert (ex / "01_x.ipynb").read_bytes() == mine
    assert assign.main(sol, ex, check_only=True) == 1
    assert (ex / "01_x.ipynb").read_bytes() == mine
    assert assign.main(sol, ex, force=True) == 0
    assert "# mine" not in (ex / "01_x.ipynb").read_text()


def test_files_assign_did_not_write_are_never_deleted(tmp_path, capsys):
    sol, ex = tmp_path / "solutions", tmp_path / "exercises"
    sol.mkdir()
    _solution_notebook(sol / "01_x.ipynb")
    _solution_notebook(sol / "02_y.ipynb")
    assign.main(sol, ex)
    (ex / "my_notes.ipynb").write_text("{}")
    (sol / "02_y.ipynb").unlink()
    _student_answers(ex / "01_x.ipynb")
    assert assign.main(sol, ex, check_only=True) == 1
    assert "no solution for" in capsys.readouterr().out      # 02_y: written by assign, untouched
    assign.main(sol, ex, force=True)
    assert (ex / "my_notes.ipynb").read_text() == "{}"
    assert not (ex / "02_y.ipynb").exists()
    assert "my_notes.ipynb: no solution, and not as gemmlab assign wrote it: left alone" in \
        capsys.readouterr().out
    (sol / "01_x.ipynb").unlink()
    _solution_notebook(sol / "03_z.ipynb")
    _student_answers(ex / "01_x.ipynb")
    assign.main(sol, ex, force=True)
    assert (ex / "01_x.ipynb").exists()                       # edited: kept even with --force


def test_without_solutions_assign_refuses_and_deletes_nothing(tmp_path, capsys):
    ex = tmp_path / "exercises"
    ex.mkdir()
    (ex / "01_x.ipynb").write_text("{}")
    assert assign.main(tmp_path / "solutions", ex) == 2
    assert "instructors' tool" in capsys.readouterr().err
    assert (ex / "01_x.ipynb").exists()


def test_the_repository_exercises_are_up_to_date():
    assert assign.main("solutions", "exercises", check_only=True) == 0, \
        "exercises/ is stale: run `gemmlab assign`"
