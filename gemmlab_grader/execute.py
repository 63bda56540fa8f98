"""Running one notebook in its confinement and reading back what it handed in: the grader's side
of :mod:`gemmlab_grader.runner`, whose standard input (the request, the notebook) and output are
unnamed temporary files of the grader's. The runner's tree is killed once it ends, its time runs
out or the run is interrupted; then what it wrote is read (:func:`gemmlab_grader.answers.check`).
"""
import io
import json
import subprocess
import tempfile
import time

from gemmlab.judging.cell import describe_exit

from . import answers
from .isolate import start_confined


class NotebookRun:
    """One notebook's run in ``folder`` (the grader's): :meth:`execute`, then :meth:`collect`."""

    def __init__(self, folder, isolation, stop=None):
        self.folder, self.isolation, self.stop = folder, isolation, stop
        self.output = tempfile.TemporaryFile(dir=folder)

    def execute(self, notebook, request, seconds):
        """Run the runner on ``notebook`` (bytes) with ``request``; '' if it ended normally, else
        why not (in words)."""
        request = dict(request, notebook_bytes=len(notebook))
        workdir = self.folder / "work"
        workdir.mkdir()
        with tempfile.TemporaryFile(dir=self.folder) as stdin:
            stdin.write(answers.pack(json.dumps(request).encode()) + answers.pack(notebook))
            stdin.seek(0)
            tree = start_confined(self.isolation, workdir, "gemmlab_grader.runner", workdir,
                                  stdin=stdin, stdout=self.output, stderr=subprocess.DEVNULL)
        deadline = time.monotonic() + seconds
        try:                # wait for the tree's leader, then kill the whole tree
            while True:
                try:
                    tree.popen.wait(timeout=min(1.0, max(0.01, deadline - time.monotonic())))
                    break
                except subprocess.TimeoutExpired:
                    if self.stop is not None and self.stop.is_set():
                        return "not graded: the run was interrupted"
                    if time.monotonic() >= deadline:
                        return f"the notebook ran past {seconds} s and was stopped"
        finally:
            tree.kill()
        if tree.popen.returncode != 0:
            return (f"the notebook's runner ended with {describe_exit(tree.popen.returncode)} "
                    f"(did the notebook kill its parent process?)")
        return ""

    def collect(self):
        """{"run", "answers", "problem"} (:func:`gemmlab_grader.answers.check`) of what the
        runner wrote, once its tree is dead."""
        self.output.seek(0)
        data = self.output.read(answers.MAX_OUTPUT + 1)
        if len(data) > answers.MAX_OUTPUT:
            return {"run": None, "answers": None,
                    "problem": f"its runner sent more than the {answers.MAX_OUTPUT >> 20} MiB "
                               f"the grader reads"}
        return answers.check(io.BytesIO(data))

    def close(self):
        self.output.close()
