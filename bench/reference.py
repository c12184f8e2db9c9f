"""Policies as shares of the clairvoyant reference, and the reference's gap to the bound.

    python bench/reference.py [--suite scenarios/suites/standard ...] [--limit 28]
                              [--missions harder-0026.json,...] [--tag NAME]
                              [--policies auto,no-replan,full-knowledge-t0] [--workers 2]
                              [--out bench/results/reference.txt]

Per mission of each suite (the first ``--limit`` of its manifest, all without it; also those
named in ``--missions``, a sample such as the missions a fix is about): each
policy flown as ``isr eval`` configures it (agents on the rules engine, no store), and the
clairvoyant reference (``mission.evaluation.reference``: the best flown of the clairvoyant's
candidate plans, the first plan and the full-knowledge-at-t0 plan, the two latter being the
same runs as the no-replan and full-knowledge-t0 policies) with its relaxation bound
(``planner.bound.upper_bound``). Printed per suite and policy: the share of the
clairvoyant's flown points (mean, 95 % CI half-width, median; missions where the
clairvoyant scored 0 left out), fuel-outs and drones lost to a known SAM (initial SAMs
count as known), missions where auto collected less than no-replan; the clairvoyant's gap
to the bound, missions where its planned value or its flown score exceeds the bound (must be
0), which plan won, and its cost per mission. ``full-knowledge-t0`` (the old "oracle")
knows the timeline at t = 0 but plans on it as if it all held from the start.

Runs go to ``--workers`` processes; timings depend on the machine's load (``uptime`` is
printed beside them).
"""

from __future__ import annotations

import argparse
import json
import math
import statistics
import subprocess
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

NAMES = {"oracle": "full knowledge at t0", "full-knowledge-t0": "full knowledge at t0"}


def _one(path: str, policies: list[str]) -> dict[str, Any]:
    """Every policy and the reference on one mission (runs in a worker process)."""
    from mission.evaluation.reference import clairvoyant_reference, fly
    from planner.scenario import load_scenario

    scenario = load_scenario(path)
    flights = {p: fly(scenario, p, path=path) for p in policies}
    started = time.perf_counter()
    ref = clairvoyant_reference(scenario, path=path, known=flights)
    return {
        "mission": Path(path).name,
        "policies": {
            p: {
                "points": f.points,
                "fuel_outs": f.fuel_outs,
                "lost_known": f.lost_known,
                "seconds": f.seconds,
                "forced": list(f.forced),
            }
            for p, f in flights.items()
        },
        "clairvoyant": ref.flown,
        "source": ref.source,
        "planned": ref.planned,
        "bound": ref.bound,
        "flights": ref.flights,
        "reference_seconds": time.perf_counter() - started,
    }


def _stats(values: list[float]) -> str:
    if not values:
        return "-"
    mean = statistics.fmean(values)
    half = 1.96 * statistics.stdev(values) / math.sqrt(len(values)) if len(values) > 1 else 0.0
    return (
        f"{100 * mean:6.1f} % ± {100 * half:4.1f}  median {100 * statistics.median(values):6.1f} %"
    )


def _report(suite: str, rows: list[dict[str, Any]], policies: list[str]) -> list[str]:
    lines = [f"suite {suite}: {len(rows)} missions"]
    ok = [r for r in rows if r["clairvoyant"] > 0]
    for p in policies:
        shares = [r["policies"][p]["points"] / r["clairvoyant"] for r in ok]
        fuel = sum(r["policies"][p]["fuel_outs"] for r in rows)
        known = sum(r["policies"][p]["lost_known"] for r in rows)
        above = sum(1 for x in shares if x > 1 + 1e-9)
        lines.append(
            f"  {NAMES.get(p, p):22s} {_stats(shares)}   fuel-outs {fuel}  lost to known SAM {known}"
            f"  above the reference {above}"
        )
    classes = sorted({str(r.get("disruption")) for r in ok})
    shown = [p for p in ("auto", "no-replan") if p in policies]
    for cls in classes if len(classes) > 1 else []:
        of = [r for r in ok if str(r.get("disruption")) == cls]
        means = " / ".join(
            f"{100 * statistics.fmean(r['policies'][p]['points'] / r['clairvoyant'] for r in of):.1f} %"
            for p in shown
        )
        lines.append(f"    {cls:18s} ({len(of)}) {' / '.join(shown)}: {means}")
    if "auto" in policies and "no-replan" in policies:
        worse = [
            r
            for r in rows
            if r["policies"]["auto"]["points"] < r["policies"]["no-replan"]["points"] - 1e-9
        ]
        # explained: flying on, the plan in force went infeasible or unsafe (it scored by
        # breaking a promise or by luck: a drone lost before it had to turn home)
        told = [r for r in worse if r["policies"]["no-replan"].get("forced")]
        lines.append(
            f"  missions auto < no-replan: {len(worse)} ({len(worse) - len(told)} unexplained)"
        )
        for r in worse:
            a, n = r["policies"]["auto"], r["policies"]["no-replan"]
            why = ", ".join(n.get("forced") or []) or "UNEXPLAINED"
            lines.append(
                f"    {r['mission']}: auto {a['points']:g} < no-replan {n['points']:g};"
                f" the plan flown on: {why}"
            )
    gaps = [1 - r["clairvoyant"] / r["bound"] for r in rows if r["bound"] > 0]
    lines.append(f"  clairvoyant gap to the bound: {_stats(gaps)}")
    over = [r["mission"] for r in rows if max(r["planned"], r["clairvoyant"]) > r["bound"] + 1e-6]
    lines.append(
        f"  missions where the clairvoyant (planned or flown) exceeds the bound: {len(over)}"
    )
    wins: dict[str, int] = {}
    for r in rows:
        kind = r["source"].rsplit(", seed", 1)[0].replace("clairvoyant (", "clairvoyant: ")
        wins[kind] = wins.get(kind, 0) + 1
    lines.append(
        "  reference taken from: " + ", ".join(f"{k} {v}" for k, v in sorted(wins.items()))
    )
    above = sum(
        1
        for r in rows
        if r["clairvoyant"]
        > max(r["flights"].get("first plan", 0), r["flights"].get("full knowledge at t0", 0)) + 1e-9
    )
    lines.append(
        f"  missions where a clairvoyant plan beats both the first and the full-knowledge plan: {above}"
    )
    secs = [r["reference_seconds"] for r in rows]
    if secs:
        lines.append(
            f"  clairvoyant cost per mission: median {statistics.median(secs):.1f} s, "
            f"max {max(secs):.1f} s (search, 2 extra flights, bound)"
        )
    return lines


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--suite", action="append", default=None)
    parser.add_argument("--limit", type=int, default=None)
    parser.add_argument(
        "--missions", default="", help="comma-separated mission files to run on top of --limit's"
    )
    parser.add_argument(
        "--tag", default="", help="rows go to reference-SUITE-TAG.json (a sample keeps the suite's)"
    )
    parser.add_argument("--policies", default="auto,no-replan,full-knowledge-t0")
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--out", default=str(ROOT / "bench/results/reference.txt"))
    parser.add_argument(
        "--resume", action="store_true", help="keep the stored rows, run the other missions"
    )
    parser.add_argument(
        "--render", action="store_true", help="print the figures of the stored rows, run nothing"
    )
    args = parser.parse_args()
    if args.render:  # the per-mission rows a run stored (bench/results/reference-NAME.json)
        for suite in args.suite or [
            "scenarios/suites/standard",
            "scenarios/suites/harder",
            "scenarios/suites/adversarial",
        ]:
            name = json.loads((ROOT / suite / "suite.json").read_text())["spec"]["name"]
            tag = f"-{args.tag}" if args.tag else ""
            rows = json.loads((ROOT / "bench/results" / f"reference-{name}{tag}.json").read_text())
            chosen = [p for p in args.policies.split(",") if p and p in rows[0]["policies"]]
            print("\n".join(_report(name, rows, chosen)))
        return
    from rich.console import Console
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TimeElapsedColumn

    suites = args.suite or [
        "scenarios/suites/standard",
        "scenarios/suites/harder",
        "scenarios/suites/adversarial",
    ]
    policies = [p.strip() for p in args.policies.split(",") if p.strip()]
    for needed in ("no-replan", "full-knowledge-t0"):
        if needed not in policies:
            policies.append(needed)  # the reference reuses these flights
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    out: list[str] = [f"bench/reference.py {' '.join(sys.argv[1:])}", f"uptime before: {load}"]
    console = Console(stderr=True)
    began = time.perf_counter()
    with ProcessPoolExecutor(args.workers) as pool:
        for suite in suites:
            folder = ROOT / suite
            manifest = json.loads((folder / "suite.json").read_text())
            named = {m for m in args.missions.split(",") if m}
            missions = [
                m
                for i, m in enumerate(manifest["missions"])
                if (args.limit is None and not named)
                or (args.limit is not None and i < args.limit)
                or m["file"] in named
            ]
            tag = f"-{args.tag}" if args.tag else ""
            dump = ROOT / "bench/results" / f"reference-{manifest['spec']['name']}{tag}.json"
            rows: list[dict[str, Any]] = []
            if args.resume and dump.exists():  # the missions stored are not run again
                rows = json.loads(dump.read_text())
                stored = {r["mission"] for r in rows}
                missions = [m for m in missions if m["file"] not in stored]
            partial = dump.with_suffix(".jsonl").open("a")
            with Progress(
                "[progress.description]{task.description}",
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            ) as progress:
                task = progress.add_task(f"{manifest['spec']['name']}", total=len(missions))
                futures = {
                    pool.submit(_one, str(folder / m["file"]), policies): m for m in missions
                }
                for done in as_completed(futures):
                    try:
                        row = done.result()
                        print(json.dumps(row), file=partial, flush=True)
                        row["disruption"] = futures[done].get("disruption")
                        rows.append(row)
                    except Exception as exc:  # a failed mission is reported, not hidden
                        out.append(f"FAILED {futures[done]['file']}: {exc!r}")
                    progress.advance(task)
                    if not console.is_terminal:  # a log file: one line per mission
                        print(f"{suite}: {futures[done]['file']} done", file=sys.stderr, flush=True)
            partial.close()
            rows.sort(key=lambda r: r["mission"])
            text = _report(manifest["spec"]["name"], rows, policies)
            for line in text:
                console.print(line, markup=False, highlight=False)
            out += text
            dump.write_text(json.dumps(rows, indent=1))
            Path(args.out).write_text("\n".join(out) + "\n")  # a suite at a time
    load = subprocess.run(["uptime"], capture_output=True, text=True).stdout.strip()
    out += [
        f"wall {time.perf_counter() - began:.0f} s on {args.workers} workers",
        f"uptime after: {load}",
    ]
    Path(args.out).write_text("\n".join(out) + "\n")
    print("\n".join(out))


if __name__ == "__main__":
    main()
