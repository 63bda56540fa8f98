"""Run a command as a Docker container's root runs it under Docker's default seccomp profile:
without CAP_SYS_ADMIN (dropped from the bounding set by setpriv) and with no way to make a user
namespace (unshare and clone with CLONE_NEWUSER fail with EPERM, clone3 with ENOSYS, as the
profile answers). ``python tests/docker_like.py COMMAND...`` installs the filter, then runs it;
:func:`argv` adds setpriv in front. Used to try bubblewrap where Gradescope's autograder runs."""
import ctypes
import os
import shutil
import struct
import sys

AUDIT_ARCH_X86_64 = 0xC000003E
UNSHARE, CLONE, CLONE3 = 272, 56, 435          # x86_64 syscall numbers
CLONE_NEWUSER = 0x10000000
ALLOW, EPERM, ENOSYS = 0x7FFF0000, 0x00050001, 0x00050026


def _op(code, jt, jf, k):
    return struct.pack("HBBI", code, jt, jf, k)


FILTER = b"".join([
    _op(0x20, 0, 0, 4), _op(0x15, 0, 6, AUDIT_ARCH_X86_64),    # another arch: allowed
    _op(0x20, 0, 0, 0), _op(0x15, 5, 0, UNSHARE), _op(0x15, 5, 0, CLONE3),
    _op(0x15, 0, 2, CLONE), _op(0x20, 0, 0, 16), _op(0x45, 1, 0, CLONE_NEWUSER),
    _op(0x06, 0, 0, ALLOW), _op(0x06, 0, 0, EPERM), _op(0x06, 0, 0, ENOSYS)])


def usable():
    """Whether this machine can run it: root on x86_64 with setpriv."""
    return os.geteuid() == 0 and os.uname().machine == "x86_64" and bool(shutil.which("setpriv"))


def argv(command):
    """``command`` run without CAP_SYS_ADMIN, under the filter."""
    return ["setpriv", "--bounding-set=-sys_admin", "--inh-caps=-sys_admin", sys.executable,
            __file__, *map(str, command)]


if __name__ == "__main__":
    libc = ctypes.CDLL(None, use_errno=True)
    libc.prctl.argtypes = [ctypes.c_int] + [ctypes.c_ulong] * 4
    program = ctypes.create_string_buffer(FILTER)
    fprog = ctypes.create_string_buffer(struct.pack("HxxxxxxQ", len(FILTER) // 8,
                                                    ctypes.addressof(program)))
    if libc.prctl(38, 1, 0, 0, 0) or libc.prctl(22, 2, ctypes.addressof(fprog), 0, 0):
        raise SystemExit(f"cannot install the seccomp filter: errno {ctypes.get_errno()}")
    os.execvp(sys.argv[1], sys.argv[1:])
