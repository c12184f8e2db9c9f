"""Every numba kernel a run uses, loaded (or compiled into numba's on-disk cache) on tiny
problems before time matters.

Contract
--------
``warm_kernels()`` warms every part in this process, once (a second caller waits for the
first's load): a run calls it before its first tick, since a kernel loaded mid-run holds
the GIL (seconds on a fresh cache) and makes a paced tick late. ``warm_kernels(part)`` warms
one part of ``PARTS``.

``python -m executive.loop.warm`` fills the on-disk cache for the processes that follow (the
test workers, the ``isr`` processes they start): on a fresh clone compiling every kernel
takes about 57 s of one core, so it compiles the parts in processes of their own at once,
the team search's (26 s) beside the world's (the flight and the geometry, 31 s): 34 s on
this 2-core machine. Its exit code is the first failing part's; ``python -m
executive.loop.warm search`` warms one part in this process.
"""

from __future__ import annotations

import subprocess
import sys
import threading
from collections.abc import Callable

__all__ = ["PARTS", "warm_kernels"]


def _search() -> None:
    from planner import orienteering, team_search

    team_search.warmup()  # the exact kernel, the search's, the swarm path's
    orienteering.warmup()


def _world() -> None:
    # one part, not two: the geometry's kernels (the SAM field's) are the fuel check's too
    from executive.loop import homing
    from planner import validation
    from planner.geometry import distance_table
    from sim import driver

    driver.warmup()  # the flight kernels: else the first tick loads (or compiles) them
    distance_table.warmup()  # a round's compile and the replans' incremental table
    validation.warmup()  # a round's plan is validated in a worker, off the GIL
    homing.warmup()  # the fuel check's straight ways home


PARTS: dict[str, Callable[[], None]] = {"search": _search, "world": _world}

_warmed: set[str] = set()
_warming = threading.Lock()


def warm_kernels(*parts: str) -> None:
    """Warm ``parts`` (all of ``PARTS`` by default) in this process, each once: a later run
    (a test worker's next executive, a batch's next mission) finds them loaded, and the
    warm-ups' tiny problems would cost it 15-80 ms of CPU for nothing."""
    with _warming:
        for part in parts or PARTS:
            if part not in _warmed:
                PARTS[part]()
                _warmed.add(part)


def main(argv: list[str]) -> int:
    unknown = [a for a in argv if a not in PARTS]
    if unknown:
        print(f"warm: unknown part {unknown[0]!r} (the parts: {', '.join(PARTS)})", file=sys.stderr)
        return 2
    if argv:
        warm_kernels(*argv)
        return 0
    procs = [subprocess.Popen([sys.executable, "-m", "executive.loop.warm", p]) for p in PARTS]
    codes = [p.wait() for p in procs]
    return next((c for c in codes if c), 0)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
