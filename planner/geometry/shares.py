"""Work split into shares of rows for threads: the geometry's kernels hold no GIL, so a
share each on the cores a compile may use runs side by side.

``triangle_cuts`` cuts rows whose cost falls as they go (row ``a`` of a pair loop meets the
``n - a - 1`` rows after it), ``even_cuts`` rows that cost about the same; ``in_shares``
runs a kernel on each share and returns the results in row order, so a caller joining them
gets what one pass over every row gives.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from itertools import pairwise
from typing import TypeVar

__all__ = ["even_cuts", "in_shares", "triangle_cuts"]

T = TypeVar("T")


def triangle_cuts(n: int, parts: int) -> list[int]:
    """``parts + 1`` row bounds over ``0..n``, each share about as many pairs ``(a, b)``,
    ``b > a``, as another."""
    return [round(n * (1.0 - math.sqrt(1.0 - k / parts))) for k in range(parts + 1)]


def even_cuts(n: int, parts: int) -> list[int]:
    """``parts + 1`` row bounds over ``0..n``, each share about as many rows as another."""
    return [n * k // parts for k in range(parts + 1)]


def in_shares(work: Callable[[int, int], T], cuts: list[int]) -> list[T]:
    """``work(lo, hi)`` for each share of ``cuts``, one thread each (one share: in this
    thread), the results in row order."""
    bounds = list(pairwise(cuts))
    if len(bounds) == 1:
        return [work(*bounds[0])]
    with ThreadPoolExecutor(max_workers=len(bounds)) as pool:
        futures = [pool.submit(work, lo, hi) for lo, hi in bounds]
        return [f.result() for f in futures]
