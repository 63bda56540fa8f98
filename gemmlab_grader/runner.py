"""Run one submitted notebook and collect its answers, on the student's side: the grader starts
``python -m gemmlab_grader.runner WORKDIR`` inside the submission's sandbox.

Its stdin holds two frames (:func:`gemmlab.judging.worker.pack`): the request (seconds per cell,
wall clock and CPU; the answers to collect) and the notebook's bytes. The code cells run one by
one in a fresh IPython kernel in WORKDIR (:class:`gemmlab.notebook_run.CountingClient`): output
counted, never kept; an error noted; a cell past its time interrupted and the next one run; a
cell that ignores the interrupt, or a kernel that dies, stops the run. Then the kernel writes its
answers (:func:`gemmlab.judging.collected.extract`), and two frames go to stdout: a JSON report
and that file. The kernel's standard streams are /dev/null, never this channel.
"""
import asyncio
import json
import os
import resource
import signal
import subprocess
import sys
from pathlib import Path

from jupyter_client.kernelspec import KernelSpecManager

import gemmlab
from gemmlab.judging import collected
from gemmlab.notebook_run import CellStopped, CountingClient, DeadKernelError, \
    LocalAsyncKernelManager
from gemmlab_grader.answers import MAX_ANSWERS, MAX_REPORT, pack, unpack
from gemmlab_grader.isolate import python_argv

NOTED_ERRORS = 20
EXTRACT_TIMEOUT = 120


def _kernel_manager(workdir):
    """The kernel's manager: this copy of gemmlab and the grader (a kernel spec in the work
    folder), its Unix sockets in the work folder."""
    spec_dir = Path(workdir) / ".kernels" / "gemmlab-grade"
    spec_dir.mkdir(parents=True)
    root = str(Path(gemmlab.__file__).resolve().parent.parent)
    argv = python_argv(root, "ipykernel_launcher", "-f", "{connection_file}")
    (spec_dir / "kernel.json").write_text(json.dumps(
        {"argv": argv, "display_name": "gemmlab grade", "language": "python"}))
    specs = KernelSpecManager(kernel_dirs=[str(spec_dir.parent)], ensure_native_kernel=False)
    return LocalAsyncKernelManager(kernel_name="gemmlab-grade", kernel_spec_manager=specs,
                                   ip=str(Path(workdir) / "kernel"))


class Run:
    """The notebook's cells on one CountingClient, each under its limits, its errors noted."""

    def __init__(self, client):
        self.client = client
        self.errors = []
        self.index = None
        client.on_cell_error = self._on_error

    def _limit_cpu(self, seconds):
        """Let the kernel use ``seconds`` more CPU from now (RLIMIT_CPU, SIGXCPU past it)."""
        try:
            pid = self.client.km.provisioner.process.pid
            with open(f"/proc/{pid}/stat", "rb") as f:      # user and system CPU, in ticks
                ticks = f.read().rsplit(b")", 1)[1].split()[11:13]
            _soft, hard = resource.prlimit(pid, resource.RLIMIT_CPU)
            soft = int(sum(map(int, ticks)) / os.sysconf("SC_CLK_TCK") + seconds) + 1
            resource.prlimit(pid, resource.RLIMIT_CPU,
                             (soft if hard == resource.RLIM_INFINITY else min(soft, hard), hard))
        except (OSError, AttributeError, ValueError):
            pass

    async def execute(self, index, cell_index, timeout, cpu=None):
        """Run the notebook's cell ``cell_index`` (``timeout`` s of wall clock, ``cpu`` s of
        CPU, default the same), named ``index`` in notes; '' if the next cell may run, else why
        the run stops."""
        cpu = timeout if cpu is None else cpu
        self.index = index
        self._limit_cpu(cpu)
        self.client.timeout = timeout
        try:
            await self.client.async_execute_cell(self.client.nb.cells[cell_index], cell_index)
        except CellStopped as stopped:
            return f"cell {index} {stopped}"
        except DeadKernelError:
            process = getattr(self.client.km.provisioner, "process", None)
            if process is not None and process.poll() == -signal.SIGXCPU:
                return f"cell {index} used more than {cpu:g} s of CPU: its kernel was stopped"
            return f"the kernel died during cell {index}"
        if self.client.interrupted:
            self._note(index, "Timeout", f"ran past {timeout:g} s: interrupted")
        return ""

    def _on_error(self, cell, cell_index, execute_reply):
        if not self.client.interrupted:
            content = execute_reply["content"]
            self._note(self.index, content.get("ename"), content.get("evalue"))

    def _note(self, index, ename, evalue):
        if len(self.errors) < NOTED_ERRORS:
            self.errors.append({"cell": index, "ename": str(ename)[:80],
                                "evalue": str(evalue)[:300]})


async def _run_cells(client, workdir, request, numbers):
    """Every cell of ``client.nb`` in one kernel; the run's report."""
    report = {"errors": [], "stopped": "", "output_bytes": 0}
    state = Run(client)
    last = len(client.nb.cells) - 1
    try:
        async with client.async_setup_kernel(cwd=str(workdir), stdin=subprocess.DEVNULL,
                                              stdout=subprocess.DEVNULL,
                                              stderr=subprocess.DEVNULL, cleanup_kc=True):
            report["stopped"] = await state.execute("(setup)", 0, EXTRACT_TIMEOUT)
            for cell_index in range(1, last):
                if report["stopped"]:
                    break
                report["stopped"] = await state.execute(numbers[cell_index - 1], cell_index,
                                                        request["timeout"], request.get("cpu"))
            if not report["stopped"]:
                why = await state.execute("(answers)", last, EXTRACT_TIMEOUT)
                if why:
                    report["stopped"] = f"the answers could not be collected: {why}"
    except RuntimeError as exc:      # the kernel did not start
        report["stopped"] = report["stopped"] or f"the kernel did not start ({str(exc)[:150]})"
    report["errors"], report["output_bytes"] = state.errors, client.output_bytes
    return report


def run(workdir, request, notebook):
    """Run ``notebook`` (bytes) as ``request`` says, in ``workdir``: (report, path of the answers
    file or None)."""
    workdir = Path(workdir)
    try:
        cells = collected.code_cells(notebook)
    except (ValueError, RecursionError) as exc:
        return {"errors": [], "stopped": f"not a valid notebook ({str(exc)[:150]})",
                "output_bytes": 0}, None
    numbers = [n for n, source in enumerate(cells, 1) if source.strip()]
    answers = workdir / "answers.json"
    nb = collected.notebook([cells[n - 1] for n in numbers], request["requests"], answers)
    client = CountingClient(nb, km=_kernel_manager(workdir), allow_errors=True,
                            startup_timeout=120, iopub_timeout=10, shutdown_kernel="immediate",
                            record_timing=False)
    report = asyncio.run(_run_cells(client, workdir, request, numbers))
    return report, None if report["stopped"] else answers


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
    try:        # the student's file: it spoils only their answers (O_NONBLOCK: a FIFO won't hang)
        if path is not None:
            with open(os.open(path, os.O_RDONLY | os.O_NONBLOCK), "rb") as f:
                data = f.read(MAX_ANSWERS + 1)
    except OSError:
        report["answers_problem"] = "no answers were written"
    if len(data) > MAX_ANSWERS:
        data, report["answers_problem"] = b"", (f"its answers take more than {MAX_ANSWERS >> 20} "
                                                f"MiB, the most the grader reads")
    out.write(pack(json.dumps(report).encode("utf-8")) + pack(data))
    out.close()


if __name__ == "__main__":
    main()
