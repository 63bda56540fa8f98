"""The JupyterLab the suite starts is stopped, with its kernels, even when a test fails; its
kernels are local (Unix sockets, no TCP) and answer through the server."""
import asyncio
import json
import stat
import uuid
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from .lab import group_is_alive, port_is_open, running_lab


def processes_mentioning(text):
    """Process ids whose command line contains ``text`` (a kernel's id is in its command line)."""
    found = []
    for cmdline in Path("/proc").glob("[0-9]*/cmdline"):
        try:
            if text in cmdline.read_bytes().decode(errors="replace"):
                found.append(int(cmdline.parent.name))
        except OSError:
            pass                    # the process ended while we looked
    return found


def test_lab_and_its_kernels_stop_even_when_the_test_fails(tmp_path):
    started = {}
    with pytest.raises(RuntimeError, match="a failing test"):
        with running_lab(tmp_path) as lab:
            started["lab"] = lab
            started["kernel"] = lab.api("POST", "kernels", {"name": "python3"})["id"]
            assert processes_mentioning(started["kernel"])
            raise RuntimeError("a failing test")
    lab = started["lab"]
    assert not port_is_open(lab.port)
    assert not group_is_alive(lab.pgid)
    assert not processes_mentioning(started["kernel"])


def connection_file_of(kernel_id):
    """The connection file a kernel was started with (``-f FILE`` on its command line)."""
    for pid in processes_mentioning(kernel_id):
        argv = Path(f"/proc/{pid}/cmdline").read_bytes().decode().split("\0")
        if "-f" in argv:
            return Path(argv[argv.index("-f") + 1])
    raise AssertionError(f"no process of kernel {kernel_id} names its connection file")


def run_through_the_server(lab, kernel_id, code, timeout=120):
    """Run ``code`` in the kernel the way the browser does (the server's websocket, which talks
    to the kernel over its sockets); returns (the reply's status, the text the kernel printed).
    The printed text is complete once IOPub says ``status: idle`` for the request: the shell's
    ``execute_reply`` may come before the last ``stream`` message (Jupyter does not order the
    two channels), so the reply's status is kept and the idle status ends the wait. It runs in
    a thread with an event loop of its own: the browser suite's Playwright keeps one running in
    this thread."""
    from tornado.websocket import websocket_connect

    async def conversation():
        socket = await websocket_connect(f"ws://127.0.0.1:{lab.port}/api/kernels/{kernel_id}"
                                         f"/channels?token={lab.token}")
        msg_id = uuid.uuid4().hex
        await socket.write_message(json.dumps({
            "header": {"msg_id": msg_id, "msg_type": "execute_request", "username": "test",
                       "session": uuid.uuid4().hex, "version": "5.3"},
            "parent_header": {}, "metadata": {}, "channel": "shell", "buffers": [],
            "content": {"code": code, "silent": False, "store_history": False,
                        "user_expressions": {}, "allow_stdin": False}}))
        printed, reply, idle = [], None, False
        while reply is None or not idle:
            message = json.loads(await socket.read_message())
            if message.get("parent_header", {}).get("msg_id") != msg_id:
                continue
            if message["msg_type"] == "stream":
                printed.append(message["content"]["text"])
            elif message["msg_type"] == "execute_reply":
                reply = message["content"]["status"]
            elif message["msg_type"] == "status":
                idle = message["content"]["execution_state"] == "idle"
        socket.close()
        return reply, "".join(printed)

    async def within_time():
        return await asyncio.wait_for(conversation(), timeout)

    with ThreadPoolExecutor(1) as thread:
        return thread.submit(asyncio.run, within_time()).result()


def test_make_lab_kernels_use_unix_sockets_and_answer(tmp_path):
    with running_lab(tmp_path) as lab:
        kernel = lab.api("POST", "kernels", {"name": "python3"})["id"]
        status, printed = run_through_the_server(lab, kernel, "print(6 * 7)")
        assert (status, printed) == ("ok", "42\n")
        connection_file = connection_file_of(kernel)
        info = json.loads(connection_file.read_text())
        assert info["transport"] == "ipc"
        sockets = list(connection_file.parent.glob(Path(info["ip"]).name + "-*"))
        assert sockets and all(stat.S_ISSOCK(s.stat().st_mode) for s in sockets)
        assert stat.S_IMODE(connection_file.parent.stat().st_mode) & 0o077 == 0   # this user's only
    log = (tmp_path / "jupyterlab.log").read_text()
    assert "without encryption" not in log and "over TCP" not in log
