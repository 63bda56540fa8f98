"""Running notebooks the way the course's tools do (``make site``, the notebook tests): each in a
fresh local kernel, cell by cell, under a per-cell time limit, and failing loudly.

* **Local kernels.** The kernel's sockets are Unix sockets in a private folder (Jupyter's IPC
  transport), not TCP ports on localhost that every local user could reach (and that made each
  kernel warn "running over TCP without encryption").
* **No lost replies.** A cell that displays an ``ipywidgets.Output`` makes nbclient send the
  widget's new state back to the kernel on the shell channel, from the task that reads the
  outputs, while another task waits on that same socket for the cell's execute_reply. jupyter_client
  sends it raw through a blocking shadow of the asyncio socket (``Session.send``); libzmq's
  wake-up for a socket is edge-triggered, and a raw send consumes the edge of a reply that arrived
  at that moment without pyzmq's asyncio socket noticing. The reply then sat unread until the
  wait's own time limit ran out (600 s in ``make site``), when a last zero-timeout poll found it,
  and the cell counted as a success (issue 28: lesson 12, whose error and pipeline widgets draw
  into Output widgets). The shell channel here reads the socket's events through the asyncio
  socket after every send, which makes pyzmq look again and hand the reply to the waiting task.
* **Quiet kernels.** Before a kernel is shut down, a kernel_info round trip lets it finish the
  widget updates nbclient sent it: jupyter_client interrupts every kernel it shuts down, and
  one still inside such a handler logged "ERROR | KeyboardInterrupt caught in kernel". A kernel
  that answered it, idle with nothing left to do, is then stopped at once (nbclient's
  "immediate" shutdown), not sent a shutdown_request: ipykernel 7.4 flushes stdout after
  handling that request, racing its own closing of the IOPub pipe, and now and then printed
  "ERROR:tornado.general ... ZMQError: Socket operation on non-socket" to the builder's stderr
  (CI, stop 42). No lesson registers exit hooks that this would skip.
* **A stall is a failure.** A cell whose reply or outputs do not arrive within the limit, or
  whose reply was only found when the limit ran out, raises :class:`NotebookFailure`, naming
  the notebook and the cell; so does a cell that raises, and a kernel that dies.

The per-cell limit is :data:`CELL_TIMEOUT` seconds (sized to the simulator, where a lesson takes
well under a minute in all); the environment variable ``GEMMLAB_CELL_TIMEOUT`` overrides it for
every tool (the site builder's ``--timeout`` and nbval's ``--nbval-cell-timeout`` for one run).

The grader's runner runs a submission cell by cell on the same
client in its counting form, :class:`CountingClient`: outputs counted, never kept; a cell past
its limit interrupted and given a grace period to stop, else :class:`CellStopped`.

This module is also the pytest plugin (``-p gemmlab.notebook_run`` in pyproject's addopts) that
makes nbval start its kernels the same way, with the same limit. PYTEST_DONT_REWRITE: pytest
would otherwise write its own bytecode of this module into the package while tests run.
"""
import os
import shutil
import sys
import tempfile
import time
import weakref
from pathlib import Path

from queue import Empty

# jsonschema, under nbformat, builds three Earley parsers for the "iri" formats on import when
# rfc3987-syntax is installed (Jupyter's server needs it): 1.2 CPU-seconds in every process that
# runs or reads a notebook (jsonschema issue 1428). No notebook schema uses those formats, and
# jsonschema goes without them when the module cannot be imported.
sys.modules.setdefault("rfc3987_syntax", None)

import nbformat
import zmq
from jupyter_client import AsyncKernelManager, KernelManager
from jupyter_client.asynchronous import AsyncKernelClient
from jupyter_client.channels import AsyncZMQSocketChannel
from nbclient import NotebookClient
from nbclient.exceptions import CellExecutionError, CellTimeoutError, DeadKernelError
from traitlets import CaselessStrEnum, Float, HasTraits, Type, default

from . import platforms

CELL_TIMEOUT = 60


def cell_timeout():
    """Seconds a cell may take: ``GEMMLAB_CELL_TIMEOUT`` when set, else :data:`CELL_TIMEOUT`."""
    text = os.environ.get("GEMMLAB_CELL_TIMEOUT", "").strip()
    if not text:
        return CELL_TIMEOUT
    try:
        seconds = int(text)
    except ValueError:
        seconds = 0
    if seconds <= 0:
        raise ValueError(f"GEMMLAB_CELL_TIMEOUT must be a whole number of seconds > 0, got {text!r}")
    return seconds


class _UnixSockets(HasTraits):
    """Kernel manager mixin: the IPC transport, its sockets in a folder only this user can enter
    (removed with the manager), on a short path (a Unix socket's path holds at most 107 bytes)."""

    transport = CaselessStrEnum(["tcp", "ipc"], default_value="ipc", config=True)

    @default("transport")
    def _local_transport(self):
        """Unix sockets; on Windows, where ZeroMQ has none, TCP on 127.0.0.1."""
        return "ipc" if platforms.POSIX else "tcp"

    _socket_folder = None

    def _ip_default(self):
        if self.transport == "tcp":
            return "127.0.0.1"
        self._socket_folder = tempfile.mkdtemp(prefix="gemmlab-kernel-")
        weakref.finalize(self, shutil.rmtree, self._socket_folder, True)
        return os.path.join(self._socket_folder, "kernel")

    def cleanup_connection_file(self):
        """Called when the kernel is gone for good (not on a restart): its folder goes too,
        also in processes that end without running exit handlers (a process pool's workers)."""
        super().cleanup_connection_file()
        if self._socket_folder:
            shutil.rmtree(self._socket_folder, ignore_errors=True)


class LocalKernelManager(_UnixSockets, KernelManager):
    """A blocking kernel manager on local Unix sockets (nbval's kind)."""


class _ReArmedShellChannel(AsyncZMQSocketChannel):
    """The shell channel of an asyncio client, safe to send on while another task waits on it.

    ``Session.send`` sends through a blocking shadow of the asyncio socket, which can consume
    the wake-up of a reply arriving at that moment (see the module's docstring). Reading
    ``zmq.EVENTS`` through the asyncio socket afterwards makes pyzmq schedule the waiting
    receive if a message is there: the documented way to re-arm it."""

    def send(self, msg):
        super().send(msg)
        self.socket.get(zmq.EVENTS)


class LocalAsyncKernelClient(AsyncKernelClient):
    """nbclient's kind of client, with the shell channel that does not lose replies."""

    shell_channel_class = Type(_ReArmedShellChannel)


class LocalAsyncKernelManager(_UnixSockets, AsyncKernelManager):
    """nbclient's kind of kernel manager, on local Unix sockets, with :class:`LocalAsyncKernelClient`."""

    @default("client_factory")
    def _local_client(self):
        return LocalAsyncKernelClient


class NotebookFailure(Exception):
    """A notebook did not run to the end: which notebook, which cell, what happened."""

    def __init__(self, notebook, cell, what, detail=""):
        self.notebook, self.cell, self.what = notebook, cell, what
        super().__init__(f"{notebook}, {cell}: {what}" + (f"\n{detail}" if detail else ""))


def _describe_cell(number, source):
    """'cell 17 (`first line`)': code cells counted from 1 as a fresh JupyterLab run numbers them."""
    first = next((line.strip() for line in source.splitlines() if line.strip()), "")
    return f"cell {number} (`{first[:60]}{'...' if len(first) > 60 else ''}`)"


class _CellClock:
    """nbclient hooks that keep which code cell runs and when it was sent, and fail a cell whose
    reply came only when its time limit ran out (nbclient's last look finds a reply it missed,
    and would take it as a success)."""

    def __init__(self, notebook, timeout):
        self.notebook, self.timeout = notebook, timeout
        self.number, self.source, self.sent = 0, "", None

    def cell(self):
        return _describe_cell(self.number, self.source) if self.number else "before the first cell"

    async def on_cell_execute(self, cell, cell_index):
        self.number, self.source, self.sent = self.number + 1, cell.source, time.monotonic()

    async def on_cell_executed(self, cell, cell_index, execute_reply):
        if time.monotonic() - self.sent >= self.timeout:
            raise NotebookFailure(self.notebook, self.cell(),
                                  f"no reply within {self.timeout:g} s (the limit per cell)")


class _DrainingClient(NotebookClient):
    """nbclient's NotebookClient, letting the kernel finish what it was sent before shutting it
    down, once every cell has run (see the module's docstring)."""

    ran_every_cell = False

    def set_widgets_metadata(self):
        self.ran_every_cell = True          # nbclient calls this once the last cell has run
        super().set_widgets_metadata()

    async def _async_cleanup_kernel(self):
        if self.ran_every_cell and self.kc is not None and await _round_trip(self.kc, DRAIN_TIMEOUT):
            self.shutdown_kernel = "immediate"
        await super()._async_cleanup_kernel()


DRAIN_TIMEOUT = 10         # seconds


class CellStopped(Exception):
    """A cell after which the kernel cannot be given another: it ignored the interrupt sent when
    its time ran out, or it finished but its reply never came (interrupting cannot help)."""


class CountingClient(_DrainingClient):
    """The client for running untrusted notebooks cell by cell (the grader's runner).

    * Outputs are counted (:attr:`output_bytes`: stream text and display data), never kept, and
      widget messages are not stored: a notebook that prints gigabytes costs no memory here.
    * A cell past its limit is interrupted (:attr:`interrupted` says so) and has
      :attr:`grace` seconds (at most its limit) to reply; if it does not, or if it had already
      finished when its time ran out but its reply never came, :class:`CellStopped` says why.
    * A kernel that dies raises nbclient's DeadKernelError, as in :func:`execute`.
    """

    grace = Float(10.0, help="seconds an interrupted cell has to reply").tag(config=True)
    output_bytes = 0
    interrupted = False
    _waiting = None

    def output(self, outs, msg, display_id, cell_index):
        kind, content = msg["msg_type"], msg["content"]
        if kind == "stream":
            self.output_bytes += len(content.get("text", ""))
        elif kind in ("display_data", "execute_result"):
            self.output_bytes += sum(len(str(v)) for v in content.get("data", {}).values())
        return None

    def handle_comm_msg(self, outs, msg, cell_index):
        return None

    async def _async_poll_for_reply(self, msg_id, cell, timeout, task_poll_output_msg,
                                    task_poll_kernel_alive):
        self._waiting, self.interrupted = (msg_id, task_poll_output_msg), False
        return await super()._async_poll_for_reply(msg_id, cell, timeout, task_poll_output_msg,
                                                   task_poll_kernel_alive)

    async def _async_handle_timeout(self, timeout, cell=None):
        """nbclient's hook when a cell's time runs out: the reply after an interrupt, or
        :class:`CellStopped`."""
        if self._waiting is None:   # not inside a cell (a kernel_info wait)
            return await super()._async_handle_timeout(timeout, cell)
        msg_id, outputs = self._waiting
        if outputs.done():          # idle after the cell, yet no reply
            raise CellStopped("finished but its reply never came (lost)")
        self.interrupted = True
        await self.km.interrupt_kernel()
        deadline = time.monotonic() + min(self.grace, timeout)
        while (left := deadline - time.monotonic()) > 0:
            try:
                msg = await self.kc.shell_channel.get_msg(timeout=left)
            except Empty:
                break
            if msg["parent_header"].get("msg_id") == msg_id:
                return msg
        await self._async_check_alive()
        raise CellStopped(f"ran past {timeout:g} s and did not stop when interrupted")


async def _round_trip(kc, timeout):
    """Send kernel_info and wait (``timeout`` s at most) until the kernel reports itself idle
    after it: it handles shell messages in order, so it has then handled everything sent before,
    and left the handler (its reply goes out before that). True if it did."""
    msg_id = kc.kernel_info()
    deadline = time.monotonic() + timeout
    while (left := deadline - time.monotonic()) > 0:
        try:
            msg = await kc.iopub_channel.get_msg(timeout=left)
        except Exception:           # queue.Empty: not in time; or the channel is closed
            return False
        if (msg["parent_header"].get("msg_id") == msg_id and msg["msg_type"] == "status"
                and msg["content"]["execution_state"] == "idle"):
            return True
    return False


def execute(path, timeout=None, kernel_name="python3"):
    """Run the notebook at ``path`` in a fresh local kernel started in its folder; returns the
    executed notebook (nbformat) or raises :class:`NotebookFailure`. ``timeout``: seconds per
    cell, for its reply and its outputs (default :func:`cell_timeout`)."""
    path = Path(path)
    timeout = timeout or cell_timeout()
    nb = nbformat.read(path, as_version=4)
    clock = _CellClock(path.name, timeout)
    client = _DrainingClient(
        nb, timeout=timeout, iopub_timeout=timeout, raise_on_iopub_timeout=True,
        kernel_name=kernel_name, kernel_manager_class=LocalAsyncKernelManager,
        resources={"metadata": {"path": str(path.parent)}},
        on_cell_execute=clock.on_cell_execute, on_cell_executed=clock.on_cell_executed)
    try:
        client.execute()
    except NotebookFailure:
        raise
    except CellExecutionError as error:
        raise NotebookFailure(path.name, clock.cell(), f"raised {error.ename}: {error.evalue}",
                              str(error)) from None
    except CellTimeoutError as error:
        what = ("its outputs did not all arrive" if "IOPub" in str(error) else "no reply")
        raise NotebookFailure(path.name, clock.cell(),
                              f"{what} within {timeout:g} s (the limit per cell)") from None
    except DeadKernelError:
        raise NotebookFailure(path.name, clock.cell(), "the kernel died") from None
    except Exception as error:              # e.g. the kernel did not start
        raise NotebookFailure(path.name, clock.cell(), f"{type(error).__name__}: {error}") from error
    return nb


def pytest_configure(config):
    """nbval's kernels on local Unix sockets, and the course's limit per cell instead of nbval's
    2000 s, unless ``--nbval-cell-timeout`` is on the command line."""
    import nbval.kernel
    nbval.kernel.KernelManager = LocalKernelManager      # the name nbval starts its kernels with
    if not any(arg.startswith("--nbval-cell-timeout") for arg in config.invocation_params.args):
        config.option.nbval_cell_timeout = cell_timeout()
