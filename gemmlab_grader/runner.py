"""Run one submitted notebook and collect its answers; the grader starts this inside the
submission's confinement (:mod:`gemmlab_grader.confine`, and the sandbox unless told not to), so
that everything here is on the student's side: ``python -m gemmlab_grader.runner WORKDIR``.

Its standard input holds two frames (:func:`gemmlab_grader.collect.pack`): the request (seconds
allowed per cell, wall clock and CPU, and the answers to collect) and the notebook's bytes. The
notebook's code cells run one by one in a fresh IPython kernel (this Python, this copy of gemmlab
and the grader) in WORKDIR. Their output is counted, never kept; an error is noted (its name and
first line, from the execute reply). A cell past its time (wall clock; CPU through the kernel's
RLIMIT_CPU) is interrupted and the next one runs; a cell whose kernel went idle but whose
reply never came stops the run. Then, if the kernel is alive,
:func:`gemmlab_grader.answers.extract` runs in it and writes ``WORKDIR/answers.json``. At the end
two frames go to standard output: what happened (a JSON report) and that answers file, up to
:data:`~gemmlab_grader.collect.MAX_ANSWERS` bytes (nothing if there is none or it is larger).
The kernel gets /dev/null as its standard streams, never this channel.
"""
import json
import os
import resource
import signal
import stat
import subprocess
import sys
import time
from pathlib import Path
from queue import Empty

import gemmlab
from gemmlab_grader.collect import MAX_ANSWERS, MAX_REPORT, pack, unpack
from gemmlab_grader.confine import proc_stat

NOTED_ERRORS = 20
EXTRACT_TIMEOUT = 120


def _kernel_manager(workdir):
    from jupyter_client import KernelManager
    from jupyter_client.kernelspec import KernelSpecManager
    spec_dir = Path(workdir) / ".kernels" / "gemmlab-grade"
    spec_dir.mkdir(parents=True)
    root = str(Path(gemmlab.__file__).resolve().parent.parent)
    from gemmlab_grader.isolate import python_argv
    argv = python_argv(root, "ipykernel_launcher", "-f", "{connection_file}")
    (spec_dir / "kernel.json").write_text(json.dumps(
        {"argv": argv, "display_name": "gemmlab grade", "language": "python"}))
    specs = KernelSpecManager(kernel_dirs=[str(spec_dir.parent)], ensure_native_kernel=False)
    # Unix sockets in the work folder, not TCP ports on localhost that any local user can reach.
    return KernelManager(kernel_name="gemmlab-grade", kernel_spec_manager=specs, transport="ipc",
                         ip=str(Path(workdir) / "kernel"))


def _cpu_seconds(pid):
    """User plus system CPU seconds the process ``pid`` has used."""
    fields = proc_stat(pid)
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


class Run:
    def __init__(self, km, kc):
        self.km, self.kc = km, kc
        self.output_bytes = 0
        self.errors = []

    def _limit_cpu(self, seconds):
        """Let the kernel use ``seconds`` more CPU from now (RLIMIT_CPU, SIGXCPU past it)."""
        try:
            pid = self.km.provisioner.process.pid
            _soft, hard = resource.prlimit(pid, resource.RLIMIT_CPU)
            soft = int(_cpu_seconds(pid) + seconds) + 1
            resource.prlimit(pid, resource.RLIMIT_CPU,
                             (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
        except (OSError, AttributeError, ValueError):
            pass

    def execute(self, index, source, timeout, cpu=None):
        """Run one cell (``timeout`` s of wall clock, ``cpu`` s of CPU, default the same); '' if
        the next cell may run, else why the run stops."""
        cpu = timeout if cpu is None else cpu
        self._limit_cpu(cpu)
        msg_id = self.kc.execute(source, store_history=True, allow_stdin=False,
                                 stop_on_error=False)
        deadline, interrupted, finished = time.monotonic() + timeout, False, False
        while True:
            try:
                reply = self.kc.get_shell_msg(timeout=max(0.01, min(1.0, deadline - time.monotonic())))
                if reply["parent_header"].get("msg_id") == msg_id:
                    break
            except Empty:
                pass
            finished = self._drain(msg_id, wait=0) or finished
            if not self.km.is_alive():
                return self._death(index, cpu)
            if time.monotonic() > deadline:
                if finished:        # idle after the cell, yet no reply: interrupting cannot help
                    return f"cell {index} finished but its reply never came (lost)"
                if interrupted:
                    return f"cell {index} ran past {timeout:g} s and did not stop when interrupted"
                self._note(index, "Timeout", f"ran past {timeout:g} s: interrupted")
                self.km.interrupt_kernel()
                deadline, interrupted = time.monotonic() + min(10, timeout), True
        content = reply["content"]
        if content.get("status") == "error" and not interrupted:
            self._note(index, content.get("ename"), content.get("evalue"))
        self._drain(msg_id, wait=2)
        return ""

    def _death(self, index, cpu):
        process = getattr(self.km.provisioner, "process", None)
        code = process.poll() if process is not None else None
        if code == -signal.SIGXCPU:
            return f"cell {index} used more than {cpu:g} s of CPU: its kernel was stopped"
        return f"the kernel died during cell {index}"

    def _note(self, index, ename, evalue):
        if len(self.errors) < NOTED_ERRORS:
            self.errors.append({"cell": index, "ename": str(ename)[:80],
                                "evalue": str(evalue)[:300]})

    def _drain(self, msg_id, wait):
        """Count the output messages waiting (for up to ``wait`` s, until the cell's idle);
        True if the kernel reported itself idle after the cell."""
        end = time.monotonic() + wait
        while True:
            try:
                msg = self.kc.get_iopub_msg(timeout=max(0.0, end - time.monotonic()))
            except Empty:
                return False
            kind, content = msg["msg_type"], msg["content"]
            if kind == "stream":
                self.output_bytes += len(content.get("text", ""))
            elif kind in ("display_data", "execute_result", "update_display_data"):
                self.output_bytes += sum(len(str(v)) for v in content.get("data", {}).values())
            elif kind == "status" and content.get("execution_state") == "idle" \
                    and msg["parent_header"].get("msg_id") == msg_id:
                return True


def code_cells(data):
    """The sources of a notebook's code cells (nbformat 4 JSON); ValueError if it is not one.
    (Read directly: importing nbformat costs seconds, and its validation adds nothing here.)"""
    nb = json.loads(data.decode("utf-8-sig"))       # a byte-order mark is allowed
    if not isinstance(nb, dict) or not isinstance(nb.get("cells"), list) \
            or not isinstance(nb.get("nbformat"), int) or nb["nbformat"] < 4:
        raise ValueError("expected the JSON of a Jupyter notebook, format 4")
    sources = []
    for cell in nb["cells"]:
        if isinstance(cell, dict) and cell.get("cell_type") == "code":
            source = cell.get("source", "")
            if isinstance(source, list) and all(isinstance(line, str) for line in source):
                source = "".join(source)
            if not isinstance(source, str):
                raise ValueError("a code cell whose source is not text")
            sources.append(source)
    return sources


def run(workdir, request, notebook):
    """Run ``notebook`` (bytes) as ``request`` says, in ``workdir``: (report, path of the answers
    file or None)."""
    workdir = Path(workdir)
    report = {"errors": [], "stopped": "", "output_bytes": 0}
    try:
        cells = code_cells(notebook)
    except (ValueError, RecursionError) as exc:
        report["stopped"] = f"not a valid notebook ({str(exc)[:150]})"
        return report, None
    km = _kernel_manager(workdir)
    km.start_kernel(cwd=str(workdir), stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL)
    kc = km.client()
    kc.start_channels()
    answers = workdir / "answers.json"
    try:
        kc.wait_for_ready(timeout=120)
        state = Run(km, kc)
        # the collector first, while the kernel is fresh: a notebook that then uses up its memory
        # limit still has its answers collected (importing NumPy late could fail)
        report["stopped"] = state.execute("(setup)", "import gemmlab_grader.answers",
                                          EXTRACT_TIMEOUT)
        for index, source in enumerate(cells if not report["stopped"] else [], 1):
            if source.strip():
                report["stopped"] = state.execute(index, source, request["timeout"],
                                                  request.get("cpu"))
                if report["stopped"]:
                    break
        if not report["stopped"]:
            code = ("import gemmlab_grader.answers as _gemmlab_answers\n"
                    f"_gemmlab_answers.extract({request['requests']!r}, "
                    f"{str(answers)!r}, get_ipython().user_ns)")
            why = state.execute("(answers)", code, EXTRACT_TIMEOUT)
            if why:
                report["stopped"] = f"the answers could not be collected: {why}"
        report["errors"], report["output_bytes"] = state.errors, state.output_bytes
    except RuntimeError as exc:      # the kernel did not start
        report["stopped"] = f"the kernel did not start ({str(exc)[:150]})"
    finally:
        kc.stop_channels()
        km.shutdown_kernel(now=True)
    return report, None if report["stopped"] else answers


def _answers_file(path):
    """(bytes of the answers file, '') or (b'', why not): a regular file, not followed through a
    link, at most MAX_ANSWERS bytes."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return b"", "no answers were written"
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            return b"", "the answers file is not a regular file"
        data = f.read(MAX_ANSWERS + 1)
    if len(data) > MAX_ANSWERS:
        return b"", (f"its answers take more than {MAX_ANSWERS >> 20} MiB, the most the grader "
                     f"reads")
    return data, ""


def main():
    workdir = Path(sys.argv[1])
    stdin = os.fdopen(os.dup(0), "rb")
    out = os.fdopen(os.dup(1), "wb")
    quiet = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):
        os.dup2(quiet, fd)
    request = json.loads(unpack(stdin, MAX_REPORT))
    notebook = unpack(stdin, request["notebook_bytes"])
    stdin.close()
    report, path = run(workdir, request, notebook)
    data = b""
    if path is not None:
        data, report["answers_problem"] = _answers_file(path)
    out.write(pack(json.dumps(report).encode("utf-8")) + pack(data))
    out.close()


if __name__ == "__main__":
    main()
