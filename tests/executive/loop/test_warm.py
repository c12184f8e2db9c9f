"""``python -m executive.loop.warm`` fills numba's on-disk cache with every kernel a run warms,
in processes of its own, so the processes that follow load them and compile none."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[3]

# In a fresh process: warm every part, then say, per numba dispatcher of the project's
# packages that holds a compiled kernel, how many of its kernels came from the cache.
_PROBE = """
import json, sys
from numba.core.registry import CPUDispatcher
from executive.loop.warm import warm_kernels
warm_kernels()
seen = {}
for name, module in list(sys.modules.items()):
    if name.split(".")[0] not in ("planner", "sim", "executive"):
        continue
    for value in vars(module).values():
        if isinstance(value, CPUDispatcher) and value.overloads:
            name = value.py_func.__module__ + "." + value.py_func.__qualname__
            seen[name] = [len(value.overloads), sum(value.stats.cache_hits.values())]
print(json.dumps(seen))
"""


def _python(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "PYTHONDONTWRITEBYTECODE": ""}
    return subprocess.run(
        [sys.executable, *args], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )


def test_after_the_warm_a_process_loads_every_kernel_from_the_cache() -> None:
    warm = _python("-m", "executive.loop.warm")
    assert warm.returncode == 0, warm.stderr
    probe = _python("-c", _PROBE)
    assert probe.returncode == 0, probe.stderr
    seen = json.loads(probe.stdout)
    # the team search's, the flight's, the geometry's, the fuel check's kernels
    for module in ("planner._team", "sim._kernels", "planner.geometry", "executive.loop.homing"):
        assert any(name.startswith(module) for name in seen), (module, sorted(seen))
    compiled_here = {name: n for name, (n, hits) in seen.items() if hits < n}
    assert not compiled_here, f"compiled, not loaded from the cache: {compiled_here}"


def test_an_unknown_part_is_refused_naming_the_parts() -> None:
    done = _python("-m", "executive.loop.warm", "search", "kernels")
    assert done.returncode == 2
    assert "unknown part 'kernels'" in done.stderr
    assert "search, world" in done.stderr
    assert "Traceback" not in done.stderr
