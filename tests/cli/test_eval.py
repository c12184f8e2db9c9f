"""``isr eval`` against a real Dask scheduler and two worker processes on 127.0.0.1 (as the
MQTT tests use a real broker): every mission x policy traced to the store with its labels,
a worker killed mid-batch costs nothing but a retry and stores no run twice (one run per
task key, under a unique index), and a second run resumes (runs none)."""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from cli.main import build_app
from executive.traces import TraceReader
from tests.executive.bus.broker import free_port

runner = CliRunner()
app = build_app()
DASK = str(Path(sys.executable).with_name("dask"))


class Cluster:
    """``dask scheduler`` and two ``dask worker`` processes of the test's own."""

    def __init__(self) -> None:
        self.port = free_port()
        self.address = f"tcp://127.0.0.1:{self.port}"
        self.procs: list[subprocess.Popen] = []

    def _start(self, *args: str) -> subprocess.Popen:
        proc = subprocess.Popen(
            [DASK, *args],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            env={**os.environ, "PYTHONWARNINGS": "ignore"},
        )
        self.procs.append(proc)
        return proc

    def __enter__(self) -> Cluster:
        self._start("scheduler", "--host", "127.0.0.1", "--port", str(self.port), "--no-dashboard")
        self.workers = [
            self._start(
                "worker", self.address, "--nthreads", "1", "--nworkers", "1", "--no-dashboard"
            )
            for _ in range(2)
        ]
        from distributed import Client

        with Client(self.address, timeout=60) as client:
            client.wait_for_workers(2, timeout=60)
        return self

    def __exit__(self, *exc) -> None:
        for proc in self.procs:
            proc.send_signal(signal.SIGTERM)
        for proc in self.procs:
            try:
                proc.wait(20)
            except subprocess.TimeoutExpired:
                proc.kill()


@pytest.fixture
def suite(tmp_path):
    """Four small missions (a 30 km square, the generator's smallest: each flies in about
    0.6 CPU s instead of 1.7 on the default 100 km), one per disruption class twice."""
    out = tmp_path / "suite"
    done = runner.invoke(
        app,
        [
            "scenario",
            "generate",
            "--name",
            "ev",
            "--count",
            "4",
            "--targets",
            "10..18",
            "--drones",
            "2..4",
            "--size",
            "30",
            "--disruptions",
            "popup_sam,lost_drone",
            "--out",
            str(out),
        ],
    )
    assert done.exit_code == 0, done.output
    return out


@pytest.mark.slow
@pytest.mark.skipif(not shutil.which(DASK), reason="the dask command comes with dask[distributed]")
def test_a_batch_on_a_real_scheduler_survives_a_killed_worker_and_resumes(suite, tmp_path):
    url = f"sqlite:///{tmp_path / 'eval.db'}"
    args = [
        "eval",
        str(suite),
        "--policies",
        "auto,no-replan,full-knowledge-t0",
        "--db",
        url,
        "--no-agents",
        "--json",
    ]
    with Cluster() as cluster:
        killed: list[int] = []

        def kill_a_worker_once_runs_land() -> None:  # mid-batch: after the first run is stored
            deadline = time.monotonic() + 300  # a cold numba cache compiles first
            while time.monotonic() < deadline:
                if (tmp_path / "eval.db").exists():
                    reader = TraceReader(url)
                    n = sum(1 for r in reader.runs(100) if r["status"] == "ended")
                    reader.close()
                    if n >= 1:
                        cluster.workers[0].kill()
                        killed.append(n)
                        return
                time.sleep(0.2)

        killer = threading.Thread(target=kill_a_worker_once_runs_land)
        killer.start()
        done = runner.invoke(app, [*args, "--scheduler", cluster.address])
        killer.join()
        assert killed and killed[0] < 12, "the worker was not killed mid-batch"
        assert done.exit_code == 0, done.output
        out = json.loads(done.stdout.strip().splitlines()[-1])
        assert out["runs"] == 12 and out["failed"] == []
        reader = TraceReader(url)
        stored = reader.runs(100)
        labels = [(r["config"] or {}).get("labels") for r in stored]
        reader.close()
        # exactly once: a task recomputed after the kill reports the run the store holds
        assert len(stored) == 12, [(r["run_id"], r["status"]) for r in stored]
        assert all(r["status"] == "ended" for r in stored)
        assert len({(r["config"] or {}).get("batch_key") for r in stored}) == 12
        assert all(lab["suite"] == "ev" for lab in labels)
        assert {lab["policy"] for lab in labels} == {"auto", "no-replan", "full-knowledge-t0"}
        everything = {(f["policy"], f["disruption"]): f for f in out["figures"]}
        assert everything[("full-knowledge-t0", "all")]["share_mean"] == 1.0
        assert everything[("auto", "all")]["reference"] == "full-knowledge-t0"  # no clairvoyant
        assert everything[("auto", "all")]["runs"] == 4
        assert all(f["lost_known"] == 0 for f in out["figures"])
        again = runner.invoke(
            app, [*args, "--scheduler", cluster.address, "--out", str(tmp_path / "rep")]
        )
        assert again.exit_code == 0 and "12 already stored, 0 to run" in again.output
        assert "kernels ready" not in again.output  # nothing to run: no worker was asked
    page = (tmp_path / "rep" / "report.html").read_text()
    _check_report(page, tmp_path / "rep" / "report.html", url)
    # The same report from the store alone, by the suite's name.
    done = runner.invoke(
        app, ["eval", "report", "ev", "--db", url, "--out", str(tmp_path / "r2.html")]
    )
    assert done.exit_code == 0, done.output
    assert "gap to bound" in done.output  # the terminal table too
    assert "suite ev: points as a share of full knowledge at t0 (not an upper" in done.output
    _check_report((tmp_path / "r2.html").read_text(), tmp_path / "r2.html", url)
    # By its folder (its suite.json names it); a wrong name lists the suites stored.
    done = runner.invoke(
        app, ["eval", "report", str(suite), "--db", url, "--out", str(tmp_path / "r3.html")]
    )
    assert done.exit_code == 0 and (tmp_path / "r3.html").is_file(), done.output
    done = runner.invoke(
        app, ["eval", "report", "suite", "--db", url, "--out", str(tmp_path / "r4.html")]
    )
    assert done.exit_code == 2 and "stored: ev (" in done.output


def _check_report(page: str, html_path: Path, url: str) -> None:
    """The page holds the table, the goal check, embedded charts, PNGs beside it, and replay
    links to runs that are in the store."""
    reader = TraceReader(url)
    stored = {r["run_id"] for r in reader.runs(100)}
    reader.close()
    assert "Per policy and disruption class" in page and "<td>auto</td><td>all</td>" in page
    assert "of the points of full knowledge at t0 (not an upper bound) (goal ≥ 95%)" in page
    assert page.count("data:image/png;base64,") == 3
    for chart in ("share", "harm", "latency"):
        png = html_path.with_name(f"{html_path.stem}-{chart}.png")
        assert png.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    links = re.findall(r"/\?replay=([0-9a-f]+)'", page)
    assert links and set(links) <= stored


def test_a_warm_worker_is_warmed_once(tmp_path):
    """The plugin loads the kernels once per process, however often a worker starts it."""
    from mission.evaluation.warm import WarmKernels

    plugin = WarmKernels()
    plugin.setup(worker=None)
    first = WarmKernels.seconds()
    plugin.setup(worker=None)
    assert first > 0 and WarmKernels.seconds() == first


def test_report_of_an_unknown_suite_or_a_bad_path_is_one_line_and_exit_2(tmp_path):
    url = f"sqlite:///{tmp_path / 'e.db'}"
    TraceReader(url).close()
    done = runner.invoke(
        app, ["eval", "report", "nope", "--db", url, "--out", str(tmp_path / "r.html")]
    )
    assert done.exit_code == 2 and "nope: no ended run" in done.output
    assert "stored: none" in done.output
    done = runner.invoke(
        app, ["eval", "report", "nope", "--db", url, "--out", str(tmp_path / "r.txt")]
    )
    assert done.exit_code == 2 and "--out" in done.output and "Traceback" not in done.output
    assert not list(tmp_path.glob("r*"))  # nothing half-written


def test_bad_options_are_one_line_and_exit_2(suite, tmp_path):
    url = f"sqlite:///{tmp_path / 'e.db'}"
    for extra, needle in (
        (["--policies", "auto,yolo"], "--policies"),
        (["--scheduler", "localhost:8786"], "--scheduler"),
        (["--engine", "oracle-of-delphi"], "--engine"),
    ):
        done = runner.invoke(app, ["eval", str(suite), "--db", url, *extra])
        assert done.exit_code == 2 and needle in done.output and "Traceback" not in done.output
    done = runner.invoke(app, ["eval", str(tmp_path), "--db", url])
    assert done.exit_code == 2 and "suite.json" in done.output


def test_a_suite_is_named_after_its_folder_unless_told(tmp_path):
    for folder, args, name in (
        (tmp_path / "late drones", [], "late-drones"),
        (tmp_path / "b", ["--name", "mine"], "mine"),
    ):
        done = runner.invoke(
            app,
            ["scenario", "generate", "--count", "1", "--targets", "8..10", "--drones", "2..2"]
            + ["--disruptions", "new_target", "--out", str(folder), *args],
        )
        assert done.exit_code == 0, done.output
        manifest = json.loads((folder / "suite.json").read_text())
        assert manifest["spec"]["name"] == name
        assert (folder / f"{name}-0000.json").is_file()
