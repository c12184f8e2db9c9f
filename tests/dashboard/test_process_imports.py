"""The viewers' process (``dashboard.process``) loads what serving the page needs, not the
mission's machinery: no numba kernels, no scipy, no simulation, no dialogue pipeline, no
planning loop, and no SQLAlchemy without a trace store; the planning endpoints load theirs
when first asked. bench/viewers_start.py measures what its start costs."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import httpx
import pytest

from dashboard.process import DashboardProcess, start_dashboard_process
from tests.conftest import ROOT
from tests.dashboard.harness import TIMEOUT, live_mission

# What the viewers' process never imports to serve (with or without a trace store).
NEVER = (
    "numba",
    "llvmlite",
    "scipy",
    "matplotlib",
    "sim.driver",
    "sim.world",
    "sim.flight",
    "planner.geometry",
    "planner.mission",
    "planner.planning",
    "agents.words.pipeline",
    "agents.responder",
    "agents.tools",
    "agents.planning",
    "executive.loop",
    "executive.traces.analysis",
    "mission",
)
STORE = ("executive.traces.reader", "sqlalchemy")  # only for a dashboard with traces

# A fresh interpreter does what the spawned process does before it serves: import
# dashboard.process, build the app and start it (its lifespan), then answers a page and the
# live state; it prints the modules it loaded.
PROBE = """
import json, sys
from starlette.testclient import TestClient
import dashboard.process
from dashboard.app import create_app
from executive.bus import InProcessBus

app = create_app(InProcessBus("r1"), token="t", trace_url=sys.argv[1] or None)
with TestClient(app) as client:
    for path in ("/", "/api/state", "/api/engines", "/api/runs"):
        assert client.get(path).status_code in (200, 404), path
print(json.dumps(sorted(sys.modules)))
"""


def _loaded(trace_url: str) -> set[str]:
    done = subprocess.run(
        [sys.executable, "-c", PROBE, trace_url],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr
    return set(json.loads(done.stdout.strip().splitlines()[-1]))


def _among(loaded: set[str], names: tuple[str, ...]) -> list[str]:
    return sorted(n for n in names if any(m == n or m.startswith(n + ".") for m in loaded))


def test_the_served_app_loads_none_of_the_missions_machinery(tmp_path):
    without = _loaded("")
    assert _among(without, NEVER + STORE) == []
    with_store = _loaded(f"sqlite:///{tmp_path / 'isr.db'}")
    assert _among(with_store, NEVER) == []
    assert _among(with_store, STORE) == list(STORE)  # the store is read when it is there


def _shared_objects(pid: int) -> set[str]:
    """The files of the shared objects (C extensions included) process ``pid`` has mapped."""
    maps = Path(f"/proc/{pid}/maps").read_text().splitlines()
    return {line.split()[-1] for line in maps if ".so" in line}


@pytest.mark.skipif(not Path("/proc/self/maps").exists(), reason="reads /proc (Linux)")
def test_the_spawned_viewers_process_serving_a_run_has_no_kernels_mapped():
    """The real process under a live run, after it served the page its frames: neither
    numba's LLVM, nor scipy, nor SQLAlchemy's compiled parts are in its memory."""

    async def go() -> set[str]:
        async with live_mission(serve=start_dashboard_process) as mission:
            server = mission.server
            assert isinstance(server, DashboardProcess)
            async with httpx.AsyncClient(base_url=mission.url, timeout=TIMEOUT) as http:
                for path in ("/", "/api/state", "/api/engines"):
                    assert (await http.get(path)).status_code == 200, path
            return _shared_objects(server.process.pid)

    mapped = asyncio.run(asyncio.wait_for(go(), 4 * TIMEOUT))
    assert any("/pydantic_core/" in f for f in mapped)  # the reading works: it serves with it
    heavy = [f for f in mapped if any(p in f for p in ("/numba/", "/llvmlite/", "/scipy/"))]
    heavy += [f for f in mapped if "/sqlalchemy/" in f]
    assert heavy == []
