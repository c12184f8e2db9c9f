"""The search's random numbers: xorshift64 on a state held in a one-element uint64 array.

The state is carried across chunks of iterations, so a run is a pure function of its seed
and its number of iterations, however the driver chunks it.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["rng_float", "rng_int", "rng_next"]


@njit(cache=True, nogil=True)
def rng_next(st: np.ndarray) -> np.uint64:
    """Advance the state; the next 64 random bits."""
    x: np.uint64 = st[0]
    x ^= x << np.uint64(13)
    x ^= x >> np.uint64(7)
    x ^= x << np.uint64(17)
    st[0] = x
    return x


@njit(cache=True, nogil=True)
def rng_float(st: np.ndarray) -> float:
    """A uniform float in [0, 1) (53 random bits)."""
    return np.float64(rng_next(st) >> np.uint64(11)) * (1.0 / 9007199254740992.0)


@njit(cache=True, nogil=True)
def rng_int(st: np.ndarray, n: int) -> int:
    """A uniform integer in [0, n)."""
    r = int(rng_float(st) * n)
    if r >= n:
        r = n - 1
    return r
