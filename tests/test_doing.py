"""A long check's "checking: ..." line, seen in a real kernel as Jupyter shows it: on stdout, in
the same output as the verdict that follows and overwritten by it, never a red stderr block above
the PASS."""
from nbclient import NotebookClient
from nbformat.v4 import new_code_cell, new_notebook

from gemmlab import notebook_run

CELL = """import time
from gemmlab import doing
doing.AFTER = 0.0                       # show the line at once (a real check waits a second)
with doing.showing():
    doing.step("compiling for sm_75, sm_90")
    time.sleep(0.3)                     # the step is on screen while the work goes on
print("[PASS] 05.lab_naive")"""


def test_the_checking_line_is_on_stdout_and_wiped_before_the_verdict():
    nb = new_notebook(cells=[new_code_cell(CELL)])
    NotebookClient(nb, timeout=120,
                   kernel_manager_class=notebook_run.LocalAsyncKernelManager).execute()
    outputs = nb.cells[0].outputs
    assert not [o for o in outputs if o.get("name") == "stderr"], outputs
    text = "".join(o["text"] for o in outputs if o.get("name") == "stdout")
    assert "checking: compiling for sm_75, sm_90" in text
    last_line = text.rstrip("\n").split("\n")[-1]
    assert last_line.rsplit("\r", 1)[-1] == "[PASS] 05.lab_naive"     # what a \r leaves shown
