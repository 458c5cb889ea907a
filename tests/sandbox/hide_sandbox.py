"""Run a program on a machine that has neither sandbox: ``python hide_sandbox.py BIN
PROGRAM [ARG...]`` installs a seccomp filter under which the Landlock system calls fail
with ENOSYS (as on a kernel without Landlock), sets PATH to the folder BIN (which holds
no bwrap), then runs PROGRAM. Linux only; the filter holds for every process below."""

from __future__ import annotations

import ctypes
import os
import sys

PR_SET_NO_NEW_PRIVS, PR_SET_SECCOMP, SECCOMP_MODE_FILTER = 38, 22, 2
LOAD_NUMBER, JUMP_GE, JUMP_GT, RETURN = 0x20, 0x35, 0x25, 0x06
ERRNO_ENOSYS, ALLOW = 0x00050000 | 38, 0x7FFF0000
FIRST, LAST = 444, 446  # landlock_create_ruleset .. landlock_restrict_self


class Instruction(ctypes.Structure):
    _fields_ = (("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32))


class Program(ctypes.Structure):
    _fields_ = (("len", ctypes.c_ushort), ("filter", ctypes.POINTER(Instruction)))


def hide_landlock() -> None:
    code = (Instruction * 5)(
        Instruction(LOAD_NUMBER, 0, 0, 0),
        Instruction(JUMP_GE, 0, 2, FIRST),
        Instruction(JUMP_GT, 1, 0, LAST),
        Instruction(RETURN, 0, 0, ERRNO_ENOSYS),
        Instruction(RETURN, 0, 0, ALLOW),
    )
    program = Program(len(code), code)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "no_new_privs")
    if libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(program), 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "seccomp")


if __name__ == "__main__":
    hide_landlock()
    os.environ["PATH"] = sys.argv[1]
    os.execv(sys.argv[2], sys.argv[2:])
