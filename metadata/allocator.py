"""Process-wide memory allocator settings for the command line (elsewhere nothing is changed).

The meta-level commands build and drop many large temporary arrays (a block of 10,000 datasets ×
1,000 learners in float64 is 80 MB).  By default glibc serves each such array with a fresh ``mmap``
and returns it to the system when freed, so the next one page-faults all its memory in again: on
the largest synthetic meta-data this cost more system time than the reading of the file.
:func:`keep_freed_memory` makes large arrays come from the heap and freed memory stay there for
reuse (glibc only).  It also has Parquet files read through jemalloc where pyarrow has it: pyarrow's
default allocator (mimalloc) spent about 3 s of system time page-faulting while reading 9 million
runs, jemalloc about 0.5 s.  The peak memory stays about the same (freed memory is reused); results are
unchanged.  Only the command line calls it: importing algorank never changes a process's allocator.
"""

from __future__ import annotations

import logging
import os
import sys

__all__ = ["keep_freed_memory", "arrow_pool", "heap_pool"]

logger = logging.getLogger(__name__)

_M_TRIM_THRESHOLD = -1  # glibc's mallopt parameters (malloc.h)
_M_MMAP_MAX = -4

_STATE = {"arrow": False, "heap": False}  # set by keep_freed_memory: pyarrow's pool; glibc keeps freed memory


def keep_freed_memory() -> bool:
    """Serve large allocations from the heap and keep freed memory for reuse (glibc ``mallopt``).

    Also asks :func:`arrow_pool` to switch pyarrow to jemalloc before the first Parquet read (unless
    ``ARROW_DEFAULT_MEMORY_POOL`` chooses a pool).

    Returns
    -------
    bool
        Whether the glibc settings were applied (False off Linux or without glibc).
    """
    _STATE["arrow"] = "ARROW_DEFAULT_MEMORY_POOL" not in os.environ
    if not sys.platform.startswith("linux"):
        return False
    try:
        import ctypes

        mallopt = ctypes.CDLL(None).mallopt
    except (OSError, AttributeError):  # not glibc (e.g. musl has no mallopt)
        return False
    mallopt.argtypes = [ctypes.c_int, ctypes.c_int]
    mallopt.restype = ctypes.c_int
    ok = bool(mallopt(_M_MMAP_MAX, 0)) and bool(mallopt(_M_TRIM_THRESHOLD, -1))  # -1: never trim (mallopt(3))
    _STATE["heap"] = ok
    logger.debug("allocator: large blocks from the heap, freed memory kept: %s", ok)
    return ok


def arrow_pool() -> None:
    """Before reading Parquet: switch pyarrow's default pool to jemalloc, once, when :func:`keep_freed_memory`
    asked for it and this pyarrow has jemalloc (otherwise nothing changes)."""
    if not _STATE["arrow"]:
        return
    _STATE["arrow"] = False
    import pyarrow as pa

    try:
        pa.set_memory_pool(pa.jemalloc_memory_pool())
    except (NotImplementedError, pa.ArrowException):  # a build without jemalloc keeps its default
        logger.debug("allocator: pyarrow has no jemalloc; its default pool is kept")


def heap_pool() -> None:
    """Before a read whose buffers are freed as soon as they are copied (a row group at a time): when
    :func:`keep_freed_memory` applied, make pyarrow allocate from the heap (its system pool), where the freed
    buffers stay and the next ones reuse them without new page faults.  jemalloc hands freed pages back to
    the system at once, and faulting them in again cost more system time than reading 90 million runs.
    Otherwise (a library caller) nothing changes."""
    if not _STATE["heap"]:
        return
    import pyarrow as pa

    pa.set_memory_pool(pa.system_memory_pool())
