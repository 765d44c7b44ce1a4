"""CPU measures that a busy machine moves little: process CPU time and, where Linux allows, instructions.

    with Counter() as counted:
        work()
    counted.cpu_seconds, counted.instructions   # instructions is None where perf events are not allowed

Instructions retired in user space by this thread are counted with ``perf_event_open`` (the
counter ``perf stat -e instructions:u`` reads): other programs on the machine do not change them,
so a ratio of two instruction counts is stable from run to run.  Where the kernel refuses
(``/proc/sys/kernel/perf_event_paranoid`` above 2, no PMU in a VM, not Linux) only CPU time is given.
"""

from __future__ import annotations

import ctypes
import os
import platform
import struct
import time
from types import TracebackType

_SYSCALL = {"x86_64": 298, "aarch64": 241}.get(platform.machine())
_PERF_TYPE_HARDWARE = 0
_PERF_COUNT_HW_INSTRUCTIONS = 1
_EXCLUDE_KERNEL = 1 << 5
_EXCLUDE_HV = 1 << 6


class _Attr(ctypes.Structure):
    """``struct perf_event_attr``, its first version (PERF_ATTR_SIZE_VER0, 64 bytes)."""

    _fields_ = [
        ("type", ctypes.c_uint32),
        ("size", ctypes.c_uint32),
        ("config", ctypes.c_uint64),
        ("sample_period", ctypes.c_uint64),
        ("sample_type", ctypes.c_uint64),
        ("read_format", ctypes.c_uint64),
        ("flags", ctypes.c_uint64),
        ("wakeup_events", ctypes.c_uint32),
        ("bp_type", ctypes.c_uint32),
        ("config1", ctypes.c_uint64),
    ]


def _open_instruction_counter(tid: int = 0) -> int | None:
    """A file descriptor counting the user-space instructions of thread ``tid`` (0: this thread), or None."""
    if _SYSCALL is None or os.name != "posix":
        return None
    try:
        libc = ctypes.CDLL(None, use_errno=True)
    except OSError:
        return None
    attr = _Attr(
        type=_PERF_TYPE_HARDWARE,
        size=ctypes.sizeof(_Attr),
        config=_PERF_COUNT_HW_INSTRUCTIONS,
        flags=_EXCLUDE_KERNEL | _EXCLUDE_HV,
    )
    fd = libc.syscall(_SYSCALL, ctypes.byref(attr), tid, -1, -1, 0)  # that thread, any CPU, no group
    return int(fd) if fd >= 0 else None


_FD = _open_instruction_counter()


class ThreadCounters:
    """User-space instructions of every thread of another process (of this user), from the first ``read()``.

    A thread is counted from the ``read()`` that first sees it: threads started between two reads are
    counted from the second only.  ``read()`` is None where perf events are not allowed.
    """

    def __init__(self, pid: int) -> None:
        self.pid = pid
        self._fds: dict[str, int | None] = {}

    def read(self) -> int | None:
        try:
            tids = os.listdir(f"/proc/{self.pid}/task")
        except OSError:
            tids = []
        for tid in tids:
            if tid not in self._fds:
                self._fds[tid] = _open_instruction_counter(int(tid))
        if not self._fds or any(fd is None for fd in self._fds.values()):
            return None
        return sum(struct.unpack("Q", os.read(fd, 8))[0] for fd in self._fds.values() if fd is not None)

    def close(self) -> None:
        for fd in self._fds.values():
            if fd is not None:
                os.close(fd)
        self._fds.clear()


def instructions() -> int | None:
    """User-space instructions retired by this thread so far (None where they cannot be counted)."""
    if _FD is None:
        return None
    count: int = struct.unpack("Q", os.read(_FD, 8))[0]
    return count


class Counter:
    """CPU seconds (``time.process_time``) and instructions spent inside the ``with`` block."""

    cpu_seconds: float = 0.0
    instructions: int | None = None

    def __enter__(self) -> Counter:
        self._instructions = instructions()
        self._cpu = time.process_time()
        return self

    def __exit__(self, kind: type[BaseException] | None, error: BaseException | None, tb: TracebackType | None) -> None:
        self.cpu_seconds = time.process_time() - self._cpu
        after = instructions()
        self.instructions = None if after is None or self._instructions is None else after - self._instructions
