"""A batch's figures, read back from the trace store: one row per run of a suite, and per
policy and disruption class the points as a share of the reference's (mean, 95 % confidence
interval, median), drones lost to a known SAM and to an unknown one, fuel-outs, safety
actions and replan latency, and the runs where each policy did worst.

The reference of a mission is the clairvoyant's (``planner.clairvoyant``) when the batch
flew it: the best flown score of the clairvoyant plan, the first plan flown without
replanning (no-replan) and the plan made with full knowledge at t = 0, as far as the batch
flew them, with the gap to the relaxation bound stored with the clairvoyant run. A batch
without clairvoyant runs is compared with the full-knowledge-at-t0 plan, and says so: that
plan is not an upper bound (it ignores when events happen)."""

from __future__ import annotations

import math
import statistics
from typing import Any

from executive.contracts import EventRecord
from executive.traces.audit import initial_sams, lost_to_known_sams
from executive.traces.reader import TraceReader
from mission.evaluation.policies import OLD_NAMES

CLAIRVOYANT = "clairvoyant"
FULL_KNOWLEDGE = "full-knowledge-t0"
REFERENCE_NAMES = {
    CLAIRVOYANT: "the clairvoyant reference",
    FULL_KNOWLEDGE: "full knowledge at t0 (not an upper bound)",
}

__all__ = [
    "REFERENCE_NAMES",
    "done_keys",
    "reference_name",
    "references",
    "run_rows",
    "suite_names",
    "summary",
]


def _suite_runs(reader: TraceReader, suite: str) -> list[dict[str, Any]]:
    """The ended runs of ``suite``, newest first (a key run twice counts once: the newest)."""
    seen: set[str] = set()
    out = []
    for row in reader.runs(limit=10**6):
        labels = (row.get("config") or {}).get("labels") or {}
        if labels.get("suite") != suite or row["status"] != "ended":
            continue
        key = f"{suite}/{labels.get('mission')}/{labels.get('policy')}"
        if key not in seen:
            seen.add(key)
            out.append({**row, "labels": labels, "key": key})
    return out


def suite_names(reader: TraceReader) -> dict[str, int]:
    """Every suite with ended runs in the store -> how many (for a report asked by a wrong
    name: the error lists what there is)."""
    names: dict[str, int] = {}
    for row in reader.runs(limit=10**6):
        suite = ((row.get("config") or {}).get("labels") or {}).get("suite")
        if isinstance(suite, str) and row["status"] == "ended":
            names[suite] = names.get(suite, 0) + 1
    return dict(sorted(names.items()))


def done_keys(reader: TraceReader, suite: str) -> set[str]:
    """The keys (suite/mission/policy) of the runs of ``suite`` already stored, ended."""
    return {r["key"] for r in _suite_runs(reader, suite)}


def run_rows(
    reader: TraceReader, suite: str, missions: set[str] | None = None
) -> list[dict[str, Any]]:
    """One row per stored run of the suite (of ``missions`` only, when given): its labels,
    points and what went wrong."""
    rows = []
    for run in _suite_runs(reader, suite):
        if missions is not None and run["labels"].get("mission") not in missions:
            continue
        full = reader.run(run["run_id"], prefix=False)
        outcome = full.get("outcome") or {}
        events = [
            EventRecord(run["run_id"], e["tick"], e["kind"], e["payload"])
            for e in reader.events(run["run_id"])
        ]
        known = lost_to_known_sams(events, initial_sams(full.get("scenario") or {}))
        reasons = {d: v.get("lost_reason") for d, v in (outcome.get("drones") or {}).items()}
        latencies = [
            r["latency_ms"]
            for r in outcome.get("replans") or []
            if r.get("latency_ms") is not None and r.get("status") == "committed"
        ]
        policy = run["labels"].get("policy")
        bound = run["labels"].get("bound")
        rows.append(
            {
                "run_id": run["run_id"],
                "mission": run["labels"].get("mission"),
                "policy": OLD_NAMES.get(policy, policy),
                "bound": float(bound) if bound is not None else None,
                "disruption": run["labels"].get("disruption"),
                "points": float(outcome.get("total_points") or 0.0),
                "lost_known": len(known),
                "lost_unknown": sum(
                    1 for d, why in reasons.items() if why == "sam" and d not in known
                ),
                "fuel_outs": sum(1 for why in reasons.values() if why == "fuel"),
                "safety_actions": int(outcome.get("safety_actions") or 0),
                "latencies": latencies,
            }
        )
    return rows


def _ci95(values: list[float]) -> tuple[float | None, float | None]:
    """Mean and the half-width of its 95 % confidence interval (normal approximation);
    None where there is too little to say (JSON has no NaN)."""
    if not values:
        return None, None
    mean = statistics.fmean(values)
    if len(values) < 2:
        return mean, None
    return mean, 1.96 * statistics.stdev(values) / math.sqrt(len(values))


def _pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * (len(ordered) - 1) + 0.5))]


def references(rows: list[dict[str, Any]]) -> tuple[str, dict[str, float], dict[str, float]]:
    """(which reference, its points per mission, its bound per mission): the clairvoyant's
    (the best flown of the clairvoyant, no-replan and full-knowledge runs of each mission
    the clairvoyant ran) when the batch has clairvoyant runs, else full knowledge at t0."""
    kind = CLAIRVOYANT if any(r["policy"] == CLAIRVOYANT for r in rows) else FULL_KNOWLEDGE
    points: dict[str, float] = {}
    bounds: dict[str, float] = {}
    flown = {r["mission"] for r in rows if r["policy"] == kind}
    among = (CLAIRVOYANT, "no-replan", FULL_KNOWLEDGE) if kind == CLAIRVOYANT else (kind,)
    for r in rows:
        if r["mission"] in flown and r["policy"] in among:
            points[r["mission"]] = max(points.get(r["mission"], 0.0), r["points"])
        if r["policy"] == CLAIRVOYANT and r.get("bound") is not None:
            bounds[r["mission"]] = r["bound"]
    return kind, points, bounds


def reference_name(figures: list[dict[str, Any]]) -> str:
    """What the shares of ``figures`` (``summary``) are shares of, in words."""
    kind = next((f["reference"] for f in figures), CLAIRVOYANT)
    return REFERENCE_NAMES.get(kind, kind)


def summary(rows: list[dict[str, Any]], *, worst: int = 3) -> list[dict[str, Any]]:
    """Per policy and disruption class (and "all"), the figures; the share of the
    reference's points (``references``) is over the missions it was flown on (and scored
    above 0); ``bound_gap`` is the reference's gap to the relaxation bound (the
    clairvoyant's rows only)."""
    kind, reference, bounds = references(rows)
    groups: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for r in rows:
        for cls in (r["disruption"] or "-", "all"):
            groups.setdefault((r["policy"], cls), []).append(r)
    out = []
    for (policy, cls), runs in sorted(groups.items()):
        shares = [
            (r["points"] / reference[r["mission"]], r)
            for r in runs
            if reference.get(r["mission"], 0) > 0
        ]
        mean, half = _ci95([s for s, _ in shares])
        gaps = [
            1.0 - reference[r["mission"]] / bounds[r["mission"]]
            for r in runs
            if bounds.get(r["mission"], 0) > 0 and r["mission"] in reference
        ]
        latencies = [x for r in runs for x in r["latencies"]]
        out.append(
            {
                "policy": policy,
                "disruption": cls,
                "runs": len(runs),
                "points_mean": statistics.fmean(r["points"] for r in runs),
                "share_mean": mean,
                "share_ci95": half,
                "share_median": statistics.median([s for s, _ in shares]) if shares else None,
                "reference": kind,
                "bound_gap": statistics.fmean(gaps) if gaps else None,
                "lost_known": sum(r["lost_known"] for r in runs),
                "lost_unknown": sum(r["lost_unknown"] for r in runs),
                "fuel_outs": sum(r["fuel_outs"] for r in runs),
                "safety_actions": sum(r["safety_actions"] for r in runs),
                "latency_p50": _pct(latencies, 0.5),
                "latency_p95": _pct(latencies, 0.95),
                "worst": [
                    {"mission": r["mission"], "run_id": r["run_id"], "share": s}
                    for s, r in sorted(shares, key=lambda x: x[0])[:worst]
                ],
            }
        )
    return out
