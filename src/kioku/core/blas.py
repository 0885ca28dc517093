"""How many threads the BLAS library may use for one product, by the product's size.

numpy hands matrix products to OpenBLAS (or another BLAS), which runs a pool of one thread per
core. A product over a few tens of thousands of vectors is over in milliseconds, sooner than
a pool gains anything, and the pool's threads then spin, waiting for more work, on the cores
the rest of the request needs; a product over a million vectors is bound by memory bandwidth
and can use a second thread. So :func:`threads_for` gives a product below
:data:`SMALL_PRODUCT` multiply-adds one thread and leaves larger ones to the pool. (On the
2-core machine of docs/benchmarks.md, recall at 36,500 memories measured the same with the
limit, with a pool of two and with one thread throughout: the products there are a small part
of a recall.)

The limit is set with ``threadpoolctl`` around the product and restored after it (about 20 µs).
It is process-wide while it lasts, so a product running at the same moment in another thread
may run on one thread too: slower, never wrong. Nothing is limited when the user chose the
pool's size (``OPENBLAS_NUM_THREADS``, ``OMP_NUM_THREADS`` or ``MKL_NUM_THREADS`` set) or when
``threadpoolctl`` cannot be imported.
"""

from __future__ import annotations

import os
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any, Final

__all__ = ["SMALL_PRODUCT", "threads_for"]

#: Products of fewer multiply-adds run on one thread: 100,000 vectors of 384 dimensions.
SMALL_PRODUCT: Final = 100_000 * 384
_USER_CHOICE: Final = ("OPENBLAS_NUM_THREADS", "OMP_NUM_THREADS", "MKL_NUM_THREADS")

_lock = threading.Lock()
_controller: list[Any] = []


def _limiter() -> Any:
    """The process's ``ThreadpoolController`` (made once: it looks up the loaded libraries),
    or None without threadpoolctl."""
    with _lock:
        if not _controller:
            try:
                from threadpoolctl import ThreadpoolController  # type: ignore[import-untyped]
            except ImportError:
                _controller.append(None)
            else:
                _controller.append(ThreadpoolController())
        return _controller[0]


@contextmanager
def threads_for(multiply_adds: int) -> Iterator[None]:
    """Run the block's BLAS products on one thread when they are small (see the module)."""
    if multiply_adds >= SMALL_PRODUCT or any(os.environ.get(name) for name in _USER_CHOICE):
        yield
        return
    controller = _limiter()
    if controller is None:
        yield
        return
    with controller.limit(limits=1, user_api="blas"):
        yield
