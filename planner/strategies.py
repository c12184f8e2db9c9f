"""The planning strategies by name: the joint team search (the default) and the allocation
strategies (``planner.allocation``). Apart from the algorithms, so that a request's form or
a command's option names them without loading the solvers (scipy, the numba kernels)."""

from __future__ import annotations

__all__ = ["ALLOCATION_STRATEGIES", "DEFAULT_STRATEGY", "STRATEGIES"]

DEFAULT_STRATEGY = "team"
ALLOCATION_STRATEGIES = ("efficient", "greedy", "balanced", "geographic", "exclusive")
STRATEGIES = (DEFAULT_STRATEGY, *ALLOCATION_STRATEGIES)
