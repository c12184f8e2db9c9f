"""The coverage of the last test run, one line per package: ``make test`` measures it
(pytest-cov, configured in ``pyproject.toml``) into ``.coverage``; this prints it (``.ci/coverage_by_package.py``).

A package is a folder at the top of the repository; every file of it counts, those no test
imported too (at 0 %). Lines are statements, as ``coverage report`` counts them.
"""

from __future__ import annotations

import json
import sys
import tempfile
from collections import defaultdict
from pathlib import Path

import coverage
from coverage.exceptions import NoDataError


def main() -> int:
    cov = coverage.Coverage()
    try:
        cov.load()
        with tempfile.TemporaryDirectory() as folder:
            out = Path(folder) / "coverage.json"
            cov.json_report(outfile=str(out))
            files = json.loads(out.read_text())["files"]
    except NoDataError as exc:
        print(f"coverage: {exc} (run `make test` first)", file=sys.stderr)
        return 2
    totals: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for name, file in files.items():
        parts = Path(name).parts
        package = parts[0] if len(parts) > 1 else "(top level)"
        totals[package][0] += file["summary"]["num_statements"]
        totals[package][1] += file["summary"]["covered_lines"]
    width = max(len(p) for p in totals) if totals else 7
    print(f"{'package':<{width}}  statements  covered  coverage")
    for package, (statements, covered) in sorted(totals.items()):
        print(f"{package:<{width}}  {statements:>10}  {covered:>7}  {_pct(covered, statements)}")
    statements = sum(s for s, _ in totals.values())
    covered = sum(c for _, c in totals.values())
    print(f"{'total':<{width}}  {statements:>10}  {covered:>7}  {_pct(covered, statements)}")
    return 0


def _pct(covered: int, statements: int) -> str:
    return f"{100.0 * covered / statements:7.1f} %" if statements else "      -"


if __name__ == "__main__":
    raise SystemExit(main())
