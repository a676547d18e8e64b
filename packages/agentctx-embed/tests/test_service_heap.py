"""The service's memory figures and bounds.

`service.rss_peak_bytes()` is the process's own peak, not its parent's.

`service.bound_heap()`: glibc's mmap threshold held at 128 KB in the service process, so the
large tensors of one inference are unmapped when freed instead of fragmenting the heap
(docs/adr/0008-warm-search-service.md, "Memory"). Checked in a child process (the setting is
process-wide) through glibc's own accounting, `mallinfo2().hblks`: the blocks served by mmap."""

from __future__ import annotations

import platform
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="mallopt and mallinfo2 are glibc's")

CHILD = """
import ctypes, sys
from agentctx_embed.service import bound_heap

class MallInfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in
                ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks", "uordblks", "fordblks", "keepcost")]

libc = ctypes.CDLL(None)
libc.mallinfo2.restype = MallInfo2
libc.malloc.restype = ctypes.c_void_p
libc.free.argtypes = [ctypes.c_void_p]
if sys.argv[1] == "bound":
    bound_heap()
size = 4 * 1024 * 1024  # a tensor of a long passage
libc.free(libc.malloc(size))  # served by mmap; freed, it raises glibc's threshold unless held
before = libc.mallinfo2().hblks
block = libc.malloc(size)
print(libc.mallinfo2().hblks - before)
libc.free(block)
"""


def mapped_blocks(mode: str) -> int:
    done = subprocess.run([sys.executable, "-c", CHILD, mode], capture_output=True, text=True, check=True)
    return int(done.stdout.strip())


def test_large_blocks_stay_mapped_once_the_heap_is_bounded() -> None:
    assert mapped_blocks("free") == 0  # glibc's default: the second block came from the heap
    assert mapped_blocks("bound") == 1  # held threshold: mapped again, so unmapped when freed


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="VmHWM is Linux's")
def test_the_peak_reported_is_the_process_own_not_its_parents() -> None:
    parent = """
import subprocess, sys
held = bytearray(300 * 1024 * 1024)
held[::4096] = b"x" * len(held[::4096])  # resident
child = "from agentctx_embed.service import rss_peak_bytes; print(rss_peak_bytes())"
print(subprocess.run([sys.executable, "-c", child], capture_output=True, text=True, check=True).stdout)
"""
    done = subprocess.run([sys.executable, "-c", parent], capture_output=True, text=True, check=True)
    assert int(done.stdout.strip()) < 150 * 1024 * 1024, done.stdout  # the child's own, not the 300 MB above it
