"""Run the local embedder's matrix products on one BLAS thread.

The embedder multiplies small matrices (a few hundred tokens at a time). OpenBLAS's own threads
do not pay off at that size, and when the cores are busy (the runner's event loop, other
processes) its spinning threads make encoding up to ten times slower: measured on a loaded 2-core
machine, 3.8 vs 38 WikiEval samples/s (docs/performance.md, "Local judge speed").

:func:`single_blas_thread` limits BLAS to one thread for the duration of a block and restores the
previous setting afterwards: through ``threadpoolctl`` when it is installed, else by calling
OpenBLAS's ``set_num_threads`` in the library NumPy loaded (found by ctypes in ``numpy.libs``).
When neither is possible it does nothing.
"""

from __future__ import annotations

import ctypes
import glob
import os
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from functools import lru_cache
from typing import Any

_LOCK = threading.Lock()
_DEPTH = 0  # threads inside single_blas_thread (ctypes path)
_BEFORE = 1  # the setting to restore when the last one leaves
_SYMBOLS = (
    ("scipy_openblas_get_num_threads64_", "scipy_openblas_set_num_threads64_"),
    ("scipy_openblas_get_num_threads", "scipy_openblas_set_num_threads"),
    ("openblas_get_num_threads64_", "openblas_set_num_threads64_"),
    ("openblas_get_num_threads", "openblas_set_num_threads"),
)


@lru_cache(maxsize=1)
def _openblas() -> tuple[Callable[[], int], Callable[[int], None]] | None:
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy is a base dependency
        return None
    site = os.path.dirname(os.path.dirname(numpy.__file__))
    for path in sorted(glob.glob(os.path.join(site, "numpy.libs", "*openblas*"))):
        try:
            lib = ctypes.CDLL(path)
        except OSError:
            continue
        for get_name, set_name in _SYMBOLS:
            if hasattr(lib, get_name) and hasattr(lib, set_name):
                getter = getattr(lib, get_name)
                setter = getattr(lib, set_name)
                getter.restype = ctypes.c_int
                setter.argtypes = [ctypes.c_int]
                return (lambda g=getter: int(g())), (lambda n, f=setter: f(int(n)))
    return None


@lru_cache(maxsize=1)
def threadpool_limit() -> Callable[..., Any] | None:
    """threadpoolctl's ``limit`` of a controller made once: ``threadpool_limits`` would look up the
    loaded libraries on every call (0.4 ms, as long as encoding a short sentence)."""
    try:
        from threadpoolctl import ThreadpoolController
    except ImportError:
        return None
    limit: Callable[..., Any] = ThreadpoolController().limit
    return limit


@contextmanager
def single_blas_thread() -> Iterator[None]:
    """Limit BLAS to one thread inside the block (see the module docstring)."""
    limit = threadpool_limit()
    if limit is not None:
        with limit(limits=1, user_api="blas"):
            yield
        return
    ob = _openblas()
    if ob is None:
        yield
        return
    get, set_ = ob
    global _DEPTH, _BEFORE
    with _LOCK:  # the first thread in saves and sets; the last one out restores
        if _DEPTH == 0:
            _BEFORE = get()
            set_(1)
        _DEPTH += 1
    try:
        yield
    finally:
        with _LOCK:
            _DEPTH -= 1
            if _DEPTH == 0:
                set_(_BEFORE)
