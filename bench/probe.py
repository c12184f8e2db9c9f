"""The outside probe of issue 13, as a script: faults survived and doors locked.

    python bench/probe.py [--quick] [--only files,signals,api,broker,limits]

What a hostile user and a clumsy operator would try, run from outside against the real
``isr`` command, the real API and a real Mosquitto broker:

* ``files``: hostile scenario files x commands (validate, plan, sim, run) through the CLI in
  subprocesses: tracebacks, hangs (over 60 s), exit codes;
* ``signals``: ``isr run`` killed with SIGTERM and SIGKILL at several moments: the run's
  stored status, and what ``isr replay`` says;
* ``api``: the API fuzzed from its OpenAPI document with schemathesis, with and without the
  token: responses 5xx;
* ``broker``: a Mosquitto of the probe's own killed and restarted under a live run: time to
  publish again after its return, and what was lost;
* ``limits``: the largest mission the limits accept, planned: time and peak memory.

Targets: 0 tracebacks, 0 hangs, 0 HTTP 5xx, publishing resumed within 5 s of the broker's
return, no silent trace loss.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from rich.console import Console
from rich.table import Table

ISR = [sys.executable, "-m", "cli"]
DEMO = json.loads((ROOT / "scenarios" / "demo.json").read_text())
console = Console(width=150, record=True)


# ----- hostile scenario files ------------------------------------------------------------------


def _with(path: list[Any], value: Any) -> dict[str, Any]:
    data = json.loads(json.dumps(DEMO))
    node: Any = data
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return data


def hostile_files() -> dict[str, str]:
    """Name -> file text: each one thing a hostile or clumsy author would write."""
    t0 = ["environment", "targets", 0]
    d1 = ["drone_configs", "1"]
    out: dict[str, str] = {
        "empty": "",
        "not json": "{'airports': [}",
        "a list": "[1, 2, 3]",
        "binary": "\x00\x01\x02\xff",
        "deep nesting": "[" * 100_000 + "]" * 100_000,
        "deep objects": '{"a":' * 50_000 + "1" + "}" * 50_000,
        "duplicate keys": json.dumps(DEMO)[:-1] + ', "environment": {}}',
    }
    cases: dict[str, tuple[list[Any], Any]] = {
        "x as a string": ([*t0, "x"], "25"),
        "priority true": ([*t0, "priority"], True),
        "priority 1e308": ([*t0, "priority"], 1e308),
        "priority -1": ([*t0, "priority"], -1),
        "x 1e308": ([*t0, "x"], 1e308),
        "x huge int": ([*t0, "x"], 10**400),
        "id markup": ([*t0, "id"], "[/]"),
        "id bold markup": ([*t0, "id"], "[bold red]T1"),
        "id control chars": ([*t0, "id"], "T\x1b[31m1\n2"),
        "id 100k chars": ([*t0, "id"], "T" * 100_000),
        "enabled yes": ([*d1, "enabled"], "yes"),
        "fuel string": ([*d1, "fuelBudget"], "lots"),
        "fuel 1e308": ([*d1, "fuelBudget"], 1e308),
        "fuel negative": ([*d1, "fuelBudget"], -5),
        "sensors not a list": ([*d1, "accessibleTargets"], 7),
        "sim speed 1e308": (["sim"], {"speed": 1e308}),
        "tick_hz 0": (["sim"], {"tick_hz": 0}),
        "tick_hz 1e9": (["sim"], {"tick_hz": 1e9}),
        "timeline t 1e308": (
            ["timeline"],
            [
                {
                    "t": 1e308,
                    "op": "add_target",
                    "id": "T99",
                    "x": 1,
                    "y": 1,
                    "priority": 1,
                    "type": "A",
                }
            ],
        ),
        "timeline unknown op": (["timeline"], [{"t": 1, "op": "nuke"}]),
        "sam range 1e308": (["environment", "sams", 0, "range"], 1e308),
        "1000 SAMs": (
            ["environment", "sams"],
            [{"id": f"S{k}", "pos": [k % 100, k // 10], "range": 1.0} for k in range(1000)],
        ),
        "10000 targets": (
            ["environment", "targets"],
            [
                {"id": f"T{k}", "x": k % 100, "y": (k // 100) % 100, "priority": 1, "type": "A"}
                for k in range(10_000)
            ],
        ),
        "500 drones": (
            ["drone_configs"],
            {
                str(k): {"fuelBudget": 100, "home_airport": "A1", "accessibleTargets": "ALL"}
                for k in range(500)
            },
        ),
    }
    for name, (path, value) in cases.items():
        try:
            out[name] = json.dumps(_with(path, value))
        except (KeyError, IndexError, TypeError, ValueError, OverflowError):
            continue
    out["NaN priority"] = json.dumps(_with([*t0, "priority"], 1.0)).replace(
        '"priority": 1.0', '"priority": NaN', 1
    )
    out["Infinity x"] = json.dumps(_with([*t0, "x"], 1.5)).replace('"x": 1.5', '"x": Infinity', 1)
    return out


COMMANDS = {
    "validate": ["validate"],
    "plan": ["plan", "--seconds", "0.5"],
    "sim": ["sim", "--seconds", "0.5"],
    "run": ["run", "--headless", "--no-agents", "--db", "none"],
}


def probe_files(quick: bool) -> dict[str, Any]:
    files = hostile_files()
    commands = dict(list(COMMANDS.items())[:2]) if quick else COMMANDS
    codes: Counter[int | str] = Counter()
    tracebacks: list[str] = []
    hangs: list[str] = []
    multi_line: list[str] = []
    with tempfile.TemporaryDirectory() as tmp:
        for name, text in files.items():
            path = Path(tmp) / "scenario.json"
            path.write_text(text, encoding="utf-8", errors="surrogateescape")
            for command, args in commands.items():
                try:
                    done = subprocess.run(
                        [*ISR, args[0], str(path), *args[1:]],
                        cwd=ROOT,
                        capture_output=True,
                        timeout=60,
                        text=True,
                        errors="replace",
                    )
                except subprocess.TimeoutExpired:
                    hangs.append(f"{name} x {command}")
                    codes["hang"] += 1
                    continue
                codes[done.returncode] += 1
                if "Traceback" in done.stderr or "Traceback" in done.stdout:
                    tracebacks.append(f"{name} x {command}: {done.stderr.strip().splitlines()[-1]}")
                errors = [line for line in done.stderr.splitlines() if line.strip()]
                if done.returncode == 2 and any(not e.startswith("error:") for e in errors):
                    multi_line.append(f"{name} x {command}")
    return {
        "runs": sum(codes.values()),
        "files": len(files),
        "commands": list(commands),
        "exit codes": dict(codes),
        "tracebacks": tracebacks,
        "hangs": hangs,
        "messages not one line per problem": multi_line,
    }


# ----- signals -----------------------------------------------------------------------------------


def probe_signals(quick: bool) -> dict[str, Any]:
    from executive.traces import TraceReader
    from executive.traces.reader import STALE_S, effective_status

    moments = [0.5, 2.0, 5.0] if quick else [0.2, 0.5, 1.0, 2.0, 3.0, 5.0, 8.0, 12.0]
    rows: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory() as tmp:
        for sig in (signal.SIGTERM, signal.SIGKILL):
            for k, moment in enumerate(moments):
                url = f"sqlite:///{tmp}/runs-{sig.name}-{k}.db"
                proc = subprocess.Popen(
                    [
                        *ISR,
                        "run",
                        "scenarios/demo.json",
                        "--headless",
                        "--no-agents",
                        "--speed",
                        "20",
                        "--db",
                        url,
                        "--json",
                    ],
                    cwd=ROOT,
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                )
                time.sleep(moment)
                proc.send_signal(sig)
                try:
                    code = proc.wait(timeout=30)
                except subprocess.TimeoutExpired:
                    proc.kill()
                    code = "hang"
                stderr = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
                status, replayed, early = "-", "-", "-"
                try:
                    reader = TraceReader(url)
                    runs = reader.runs()
                    reader.close()
                except Exception as exc:  # a store that never got written
                    runs = []
                    status = f"no store ({type(exc).__name__})"
                if runs:
                    run = runs[0]
                    later = (run.get("last_seen") or run["started_at"]) + STALE_S + 1
                    status = f"{run['status']} -> {effective_status(run, now=later)}"
                    done = subprocess.run(
                        [*ISR, "replay", str(run["run_id"]), "--db", url],
                        cwd=ROOT,
                        capture_output=True,
                        text=True,
                        timeout=120,
                    )
                    said = (done.stdout + done.stderr).strip()
                    replayed = "exact" if "replayed exactly" in said else said[-90:]
                    early = "ended early" in said
                elif status == "-":
                    status = "not started"
                rows.append(
                    {
                        "signal": sig.name,
                        "at_s": moment,
                        "exit": code,
                        "traceback": "Traceback" in stderr,
                        "status": status,
                        "replay": replayed,
                        "says ended early": early,
                    }
                )
    return {"runs": rows}


# ----- the report ------------------------------------------------------------------------------


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--only", default="files,signals,api,broker,limits")
    parser.add_argument("--json", type=Path)
    parser.add_argument("--out", type=Path, help="also write the report here (text)")
    args = parser.parse_args()
    only = set(args.only.split(","))
    report: dict[str, Any] = {}
    failures = 0
    if "files" in only:
        files = report["files"] = probe_files(args.quick)
        table = Table(
            title=f"Hostile scenario files: {files['files']} files x {len(files['commands'])} commands"
        )
        for column in ("runs", "exit codes", "tracebacks", "hangs", "not one line per problem"):
            table.add_column(column)
        table.add_row(
            str(files["runs"]),
            ", ".join(f"{k}: {v}" for k, v in sorted(files["exit codes"].items(), key=str)),
            str(len(files["tracebacks"])),
            str(len(files["hangs"])),
            str(len(files["messages not one line per problem"])),
        )
        console.print(table)
        for line in files["tracebacks"] + files["hangs"]:
            console.print(f"  {line}", markup=False, highlight=False)
        failures += len(files["tracebacks"]) + len(files["hangs"])
    if "signals" in only:
        sig = report["signals"] = probe_signals(args.quick)
        table = Table(title="isr run killed from outside (demo at 20x, SQLite store)")
        for column in (
            "signal",
            "at (s)",
            "exit",
            "traceback",
            "stored status -> 30 s later",
            "replay",
            "says it ended early",
        ):
            table.add_column(column)
        for r in sig["runs"]:
            table.add_row(
                r["signal"],
                f"{r['at_s']:g}",
                str(r["exit"]),
                str(r["traceback"]),
                r["status"],
                str(r["replay"]),
                str(r["says ended early"]),
            )
            failures += bool(r["traceback"]) + (r["exit"] == "hang")
        console.print(table)
    if "api" in only:
        from probe_api import api_table, probe_api  # bench/ is on sys.path when run as a script

        api = report["api"] = probe_api(args.quick)
        if api.get("error"):
            console.print(f"API probe stopped: {api['error']}", markup=False)
            failures += 1
        else:
            console.print(api_table(api))
            fivexx = sum(len(r["5xx"]) for r in api["runs"].values())
            console.print(
                f"5xx: {fivexx}; tracebacks in the log: {len(api['tracebacks'])}; mission ticks"
                f" {api['ticks after'][0]} -> {api['ticks after'][1]}"
                f" ({'still ticking' if api['still ticking'] else 'STOPPED'})"
            )
            failures += fivexx + len(api["tracebacks"]) + (not api["still ticking"])
    if "broker" in only:
        from probe_broker import TARGET_RETURN_S, probe_broker, table_row

        broker = report["broker"] = probe_broker(args.quick)
        table = Table(title="A Mosquitto of the probe's own killed and restarted under a live run")
        table.add_column("figure")
        table.add_column("value", justify="right")
        for name, value in table_row(broker).items():
            table.add_row(name, value)
        console.print(table)
        failures += not broker["return_target_met"] or not broker["command_after_return_reached"]
        failures += broker["bad_commands_refused"] != broker["bad_commands_sent"]
        console.print(f"target: publishing again within {TARGET_RETURN_S:g} s", highlight=False)
    if "limits" in only:
        import limits
        from probe_api import probe_limits

        lim = report["limits"] = probe_limits(args.quick)
        console.print(limits.table(lim["rows"]))
        failures += not lim["largest planned within the bound"]
    if args.json:
        args.json.write_text(json.dumps(report, indent=1, default=str))
    console.print("targets met" if not failures else f"{failures} FAILURE(S)")
    if args.out:
        args.out.write_text(console.export_text())
    return 1 if failures else 0


if __name__ == "__main__":
    os.environ.setdefault("PYTHONWARNINGS", "ignore")
    sys.exit(main())
