"""The API and limits parts of the issue-13 probe (``bench/probe.py`` calls these).

    python bench/probe_api.py [--quick] [--out bench/results/probe_api.txt]

* ``probe_api(quick)``: the dashboard's API fuzzed from its OpenAPI document by schemathesis,
  valid and invalid input for every operation, against a live mission (the demo at 20x with
  a trace store), once without the control token and once with it; the cases sent, the
  responses 5xx, the failed conformance checks (content type, documented schema), the log
  records with a traceback, and whether the mission still ticks afterwards. The machinery is
  the test's (``tests/dashboard/test_fuzz.py``), with ``EXAMPLES_FULL`` cases per operation
  and mode instead of a dozen (a few thousand cases per run), randomised.
* ``probe_limits(quick)``: ``bench/limits.py``'s ``measure``: the largest mission the limits
  accept, validated and planned, time and peak memory.

Targets: 0 responses 5xx, 0 tracebacks, the mission ticking afterwards; the largest mission
planned within ``limits.BOUND_S``.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
for path in (ROOT, ROOT / "bench"):
    if str(path) not in sys.path:
        sys.path.insert(0, str(path))

from rich.console import Console
from rich.table import Table

EXAMPLES_QUICK = 10
EXAMPLES_FULL = 100  # per operation and mode: ~35 x 100 cases per run
PACE = 2.0  # x real time: the demo flies ~17 minutes, longer than the full probe


def probe_api(quick: bool) -> dict[str, Any]:
    """Fuzz the live API without and with the token; counts, 5xx, tracebacks, ticks."""
    from tests.dashboard.test_fuzz import fuzz_live_mission

    examples = EXAMPLES_QUICK if quick else EXAMPLES_FULL
    started = time.perf_counter()
    error: str | None = None
    with tempfile.TemporaryDirectory() as tmp:
        try:
            done = asyncio.run(
                fuzz_live_mission(Path(tmp) / "traces.db", examples, derandomize=False, pace=PACE)
            )
        except AssertionError as exc:  # the mission did not tick on, or did not answer
            return {"examples": examples, "error": str(exc).splitlines()[0], "runs": {}}
    runs = {}
    for name, report in (("without token", done.without_token), ("with token", done.with_token)):
        runs[name] = {
            "cases": report.cases,
            "statuses": dict(sorted(report.statuses.items())),
            "5xx": report.server_errors,
            "deliberate 5xx": report.deliberate,
            "failed checks": report.failures,
        }
    first, later = done.ticks
    return {
        "examples": examples,
        "seconds": time.perf_counter() - started,
        "runs": runs,
        "tracebacks": done.logged,
        "ticks after": [first, later],
        "still ticking": later > first,
        "error": error,
    }


def probe_limits(quick: bool) -> dict[str, Any]:
    """``bench/limits.py``'s rows: the largest mission the limits accept, and smaller ones."""
    import limits

    rows = limits.measure(quick)
    largest = [r for r in rows if r["mission"].startswith("largest")]
    return {
        "bound_s": limits.BOUND_S,
        "rows": rows,
        "largest planned within the bound": all(r["finished"] for r in largest),
    }


def api_table(api: dict[str, Any]) -> Table:
    table = Table(
        title=f"The API fuzzed (schemathesis, {api['examples']} cases per operation and mode,"
        " valid and invalid input) against a live mission"
    )
    for column in ("token", "cases", "statuses", "5xx", "of which deliberate", "failed checks"):
        table.add_column(column, justify="left" if column in ("token", "statuses") else "right")
    for name, run in api["runs"].items():
        table.add_row(
            name,
            str(run["cases"]),
            ", ".join(f"{k}: {v}" for k, v in run["statuses"].items()),
            str(len(run["5xx"]) + len(run["deliberate 5xx"])),
            str(len(run["deliberate 5xx"])),
            str(len(run["failed checks"])),
        )
    return table


def failures(api: dict[str, Any], lim: dict[str, Any] | None) -> int:
    """How many targets were missed (0: all met)."""
    if api.get("error"):
        return 1
    count = sum(len(r["5xx"]) for r in api["runs"].values()) + len(api["tracebacks"])
    count += not api["still ticking"]
    if lim is not None:
        count += not lim["largest planned within the bound"]
    return count


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--no-limits", action="store_true", help="the API part only")
    parser.add_argument("--out", type=Path, help="also write the report here (text)")
    args = parser.parse_args()
    console = Console(width=160, record=True)
    api = probe_api(args.quick)
    if api.get("error"):
        console.print(f"API probe stopped: {api['error']}", markup=False)
    else:
        console.print(api_table(api))
        for name, run in api["runs"].items():
            for line in run["5xx"][:20] + run["failed checks"][:20]:
                console.print(f"  {name}: {line}", markup=False, highlight=False)
        console.print(
            f"tracebacks in the log: {len(api['tracebacks'])}; mission ticks afterwards:"
            f" {api['ticks after'][0]} -> {api['ticks after'][1]}"
            f" ({'still ticking' if api['still ticking'] else 'STOPPED'});"
            f" {api['seconds']:.0f} s"
        )
        for line in api["tracebacks"][:20]:
            console.print(f"  {line}", markup=False, highlight=False)
    lim = None
    if not args.no_limits:
        import limits

        lim = probe_limits(args.quick)
        console.print(limits.table(lim["rows"]))
    missed = failures(api, lim)
    console.print("targets met" if not missed else f"{missed} FAILURE(S)")
    if args.out:
        args.out.write_text(console.export_text())
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
