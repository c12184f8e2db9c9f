"""The geometry kernels' ``njit`` (``planner.geometry``): numba's, or the plain Python function when the process
asked for that before importing them (``run_as_python``).

Loading numba and LLVM costs ~1 CPU s and ~100 MiB; a small mission's check
(``isr validate``) runs the same kernels as Python in milliseconds. The kernels are written
for numba and run unchanged as Python (``NUMBA_DISABLE_JIT`` runs them so too); a test
holds the two equal.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import Any, TypeVar

__all__ = ["as_python", "njit", "run_as_python"]

F = TypeVar("F", bound=Callable[..., Any])

# the modules whose kernels are decorated with this njit
KERNEL_MODULES = (
    "planner.geometry._disks",
    "planner.geometry._incremental",
    "planner.geometry._search",
    "planner.geometry._static",
)
_python = False


def njit(**options: Any) -> Callable[[F], F]:
    """numba's ``njit(**options)``, or no decorator at all after ``run_as_python()``."""
    if _python:
        return lambda fn: fn
    from numba import njit as numba_njit

    return numba_njit(**options)  # type: ignore[no-any-return]


def run_as_python() -> bool:
    """Run the geometry's kernels as plain Python in this process, if none is loaded yet;
    whether they run so."""
    global _python
    if not any(name in sys.modules for name in KERNEL_MODULES):
        _python = True
    return _python


def as_python() -> bool:
    """Whether this process runs the geometry's kernels as plain Python."""
    return _python
