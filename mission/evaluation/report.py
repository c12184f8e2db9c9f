"""A batch's report (``isr eval report``): per policy and disruption class the points as a
share of the reference's (the clairvoyant's when the batch flew it, ``figures.references``)
with their 95 % confidence interval and median, the reference's gap to the relaxation
bound, what went wrong, replan latency, and the missions where each policy did worst, each
linked to its replay in the dashboard.

One HTML page with the charts embedded (nothing to serve), and the same charts as PNG files
next to it. The goals the issue sets are checked on the page, not left to the reader: live
replanning keeps at least 95 % of the reference's points on average, loses no drone to a known
SAM and runs none out of fuel.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any
from urllib.parse import quote

import matplotlib

matplotlib.use("Agg")  # files only; never open a window
import matplotlib.pyplot as plt
import numpy as np
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from mission.evaluation.figures import reference_name, summary
from mission.evaluation.policies import REFERENCES

__all__ = ["GOAL_SHARE", "eval_report", "goals"]

GOAL_SHARE = 0.95  # live replanning keeps at least this share of the reference's points
# the policies the goals are about
_LIVE = (
    "auto",
    "review-accept-30s",
    "auto-fixed-reserve",
    "auto-spare",
    "auto-home-check",
    "auto-lean-reserve",
)
_COLOURS = {
    "auto": "tab:blue",
    "review-accept-30s": "tab:green",
    "no-replan": "tab:orange",
    "full-knowledge-t0": "tab:grey",
    "auto-fixed-reserve": "tab:purple",
    "auto-spare": "tab:cyan",
    "auto-home-check": "tab:brown",
    "auto-lean-reserve": "tab:olive",
}


def goals(figures: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Per live-replanning policy, each goal with the figure reached and whether it is met."""
    out = []
    for f in figures:
        if f["policy"] not in _LIVE or f["disruption"] != "all":
            continue
        share = f["share_mean"]
        out.append(
            {
                "policy": f["policy"],
                "reference": f["reference"],
                "share": share,
                "share_met": share is not None and share >= GOAL_SHARE,
                "lost_known": f["lost_known"],
                "fuel_outs": f["fuel_outs"],
                "met": share is not None
                and share >= GOAL_SHARE
                and f["lost_known"] == 0
                and f["fuel_outs"] == 0,
            }
        )
    return out


def _png(fig: Figure) -> bytes:
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=110)
    plt.close(fig)
    return buffer.getvalue()


def _classes(figures: list[dict[str, Any]]) -> list[str]:
    return sorted({f["disruption"] for f in figures} - {"all"}) + ["all"]


def _share_chart(figures: list[dict[str, Any]]) -> Figure:
    """Grouped bars: share of the reference's points per class and policy, CI95 as error
    bars (the clairvoyant itself left out: it is the reference, or near it)."""
    classes = _classes(figures)
    policies = [p for p in dict.fromkeys(f["policy"] for f in figures) if p != "clairvoyant"]
    by = {(f["policy"], f["disruption"]): f for f in figures}
    fig, ax = plt.subplots(figsize=(10, 4.6), layout="constrained")
    width = 0.8 / max(1, len(policies))
    x = np.arange(len(classes))
    raw = all(f["share_mean"] is None for f in figures)  # no reference: the points as such
    for k, policy in enumerate(policies):
        cells = [by.get((policy, c), {}) for c in classes]
        if raw:
            means = [f.get("points_mean") or 0.0 for f in cells]
            halves = [0.0 for _ in cells]
        else:
            means = [100 * (f.get("share_mean") or 0.0) for f in cells]
            halves = [100 * (f.get("share_ci95") or 0.0) for f in cells]
        ax.bar(
            x + (k - (len(policies) - 1) / 2) * width,
            means,
            width,
            yerr=halves,
            capsize=3,
            label=policy,
            color=_COLOURS.get(policy),
        )
    ax.set_xticks(x, classes, rotation=20)
    if raw:
        ax.set_ylabel("points (mean)")
        fig.legend(fontsize=8, ncol=4, loc="outside lower center")
        ax.set_title("Points per disruption class (no reference run in this batch: no shares)")
        return fig
    ax.axhline(100 * GOAL_SHARE, color="black", lw=0.8, ls="--", label=f"goal {GOAL_SHARE:.0%}")
    ax.axhline(100, color="grey", lw=0.6)
    ax.set_ylabel("points, % of the reference (95 % CI)")
    low = min(
        [100 * (f["share_mean"] or 1) - 100 * (f["share_ci95"] or 0) for f in figures] + [90.0]
    )
    ax.set_ylim(max(0.0, low - 5), None)
    fig.legend(fontsize=8, ncol=4, loc="outside lower center")
    ax.set_title(f"Points as a share of {reference_name(figures)}, per disruption class")
    return fig


def _harm_chart(figures: list[dict[str, Any]]) -> Figure:
    """Per policy (all classes): drones lost to a known / an unknown SAM, fuel-outs, safety
    actions."""
    rows = [f for f in figures if f["disruption"] == "all"]
    kinds = (
        ("lost_known", "lost to a known SAM"),
        ("lost_unknown", "lost to an unknown SAM"),
        ("fuel_outs", "fuel-outs"),
        ("safety_actions", "safety actions"),
    )
    fig, ax = plt.subplots(figsize=(10, 3.8), layout="constrained")
    x = np.arange(len(rows))
    width = 0.8 / len(kinds)
    for k, (key, label) in enumerate(kinds):
        values = [f[key] for f in rows]
        bars = ax.bar(x + (k - 1.5) * width, values, width, label=label)
        ax.bar_label(bars, fontsize=7)
    ax.set_xticks(x, [f["policy"] for f in rows])
    ax.set_ylabel("count over the batch")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))  # counts
    fig.legend(fontsize=8, ncol=4, loc="outside lower center")
    ax.set_title("What went wrong, per policy")
    return fig


def _latency_chart(rows: list[dict[str, Any]]) -> Figure:
    """The committed replans' latency per replanning policy (box: quartiles; whiskers 5-95 %)."""
    by: dict[str, list[float]] = {}
    for r in rows:
        by.setdefault(r["policy"], []).extend(r["latencies"])
    policies = [p for p, v in by.items() if v]
    fig, ax = plt.subplots(figsize=(10, 3.2))
    if policies:
        ax.boxplot([by[p] for p in policies], whis=(5, 95), showfliers=False)
        ax.set_xticks(range(1, len(policies) + 1), policies)
    else:
        ax.text(0.5, 0.5, "no replans in this batch", ha="center", transform=ax.transAxes)
    ax.set_ylabel("replan latency, ms")
    ax.set_title("Replan latency (committed rounds)")
    fig.tight_layout()
    return fig


def _pct(x: float | None, half: float | None = None) -> str:
    if x is None:
        return "-"
    return f"{100 * x:.1f} %" + (f" ± {100 * half:.1f}" if half is not None else "")


def _ms(x: float | None) -> str:
    return "-" if x is None else f"{x:.0f}"


def eval_report(
    rows: list[dict[str, Any]],
    out: Path,
    *,
    suite: str,
    dashboard: str = "http://127.0.0.1:8000",
    failed: list[dict[str, str]] | None = None,
) -> dict[Path, bytes]:
    """The report of a batch's ``rows`` (``figures.run_rows``): the page for ``out`` (.html)
    and its charts as PNG files beside it, each path with its bytes (the caller writes)."""
    figures = summary(rows, worst=5)
    charts = {
        "share": _png(_share_chart(figures)),
        "harm": _png(_harm_chart(figures)),
        "latency": _png(_latency_chart(rows)),
    }
    files = {out.with_name(f"{out.stem}-{name}.png"): data for name, data in charts.items()}
    by_run = {r["run_id"]: r for r in rows}
    base = dashboard.rstrip("/")

    def link(run_id: str) -> str:
        return f"<a href='{html.escape(base)}/?replay={quote(run_id)}'>{html.escape(run_id)}</a>"

    table = "\n".join(
        f"<tr class='{'all' if f['disruption'] == 'all' else ''}'>"
        f"<td>{html.escape(f['policy'])}</td><td>{html.escape(f['disruption'])}</td>"
        f"<td>{f['runs']}</td><td>{f['points_mean']:.1f}</td>"
        f"<td>{_pct(f['share_mean'], f['share_ci95'])}</td>"
        f"<td>{_pct(f['share_median'])}</td><td>{_pct(f['bound_gap'])}</td>"
        f"<td>{f['lost_known']}</td><td>{f['lost_unknown']}</td><td>{f['fuel_outs']}</td>"
        f"<td>{f['safety_actions']}</td>"
        f"<td>{_ms(f['latency_p50'])} / {_ms(f['latency_p95'])}</td></tr>"
        for f in figures
    )
    worst = "\n".join(
        f"<tr><td>{html.escape(f['policy'])}</td><td>{_pct(w['share'])}</td>"
        f"<td>{html.escape(str(w['mission']))}</td>"
        f"<td>{html.escape(str(by_run[w['run_id']]['disruption']))}</td>"
        f"<td>{by_run[w['run_id']]['lost_known'] + by_run[w['run_id']]['lost_unknown']}</td>"
        f"<td>{by_run[w['run_id']]['fuel_outs']}</td><td>{link(w['run_id'])}</td></tr>"
        for f in figures
        if f["disruption"] == "all" and f["policy"] not in REFERENCES
        for w in f["worst"]
    )
    no_reference = all(f["share_mean"] is None for f in figures)
    checks = (
        "\n".join(
            f"<li><b>{html.escape(g['policy'])}</b>: no share: the batch has no reference run"
            f" (add the clairvoyant policy, or full-knowledge-t0) — {g['lost_known']} lost to a"
            f" known SAM (goal 0), {g['fuel_outs']} fuel-outs (goal 0); its points are in the table"
            "</li>"
            for g in goals(figures)
        )
        if no_reference
        else "\n".join(
            f"<li class='{'met' if g['met'] else 'missed'}'><b>{html.escape(g['policy'])}</b>: "
            f"{_pct(g['share'])} of the points of {html.escape(reference_name(figures))} "
            f"(goal ≥ {GOAL_SHARE:.0%}), "
            f"{g['lost_known']} lost to a known SAM (goal 0), {g['fuel_outs']} fuel-outs (goal 0) — "
            f"{'met' if g['met'] else 'NOT met'}</li>"
            for g in goals(figures)
        )
    )
    failures = "\n".join(
        f"<li>{html.escape(f['key'])}: {html.escape(f['error'])}</li>" for f in failed or []
    )
    pictures = "\n".join(
        f"<img alt='{name} chart' src='data:image/png;base64,{base64.b64encode(data).decode()}'>"
        for name, data in charts.items()
    )
    missions = len({r["mission"] for r in rows})
    policies = ", ".join(dict.fromkeys(r["policy"] for r in rows))
    kind = next((f["reference"] for f in figures), "clairvoyant")
    page = _PAGE.format(
        suite=html.escape(suite),
        reference=html.escape(reference_name(figures)),
        about=_ABOUT.get(kind, ""),
        runs=len(rows),
        missions=missions,
        policies=html.escape(policies),
        checks=checks or "<li>no live-replanning policy in this batch</li>",
        table=table,
        pictures=pictures,
        worst=worst,
        failures=f"<h2>Failed runs</h2><ul>{failures}</ul>" if failures else "",
    )
    return {out: page.encode("utf-8"), **files}


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>Evaluation: {suite}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 2em; color: #222; max-width: 1100px; }}
img {{ max-width: 100%; border: 1px solid #ddd; margin: 0.5em 0; }}
table {{ border-collapse: collapse; font-size: 12px; }}
td, th {{ border-bottom: 1px solid #eee; padding: 2px 10px; text-align: left; }}
tr.all td {{ font-weight: 600; background: #f4f7fb; }}
li.met {{ color: #176d2c; }} li.missed {{ color: #a4161a; }}
</style></head><body>
<h1>Evaluation of suite {suite}</h1>
<p>{runs} runs: {missions} missions of suite <b>{suite}</b> under {policies}. Shares are of
the points of <b>{reference}</b>, per mission, over the missions it was flown on; ± is the
half-width of the 95 % confidence interval of the mean. {about}</p>
<h2>Goals</h2>
<ul>{checks}</ul>
{pictures}
<h2>Per policy and disruption class</h2>
<table><tr><th>policy</th><th>disruption</th><th>runs</th><th>points (mean)</th>
<th>share of reference</th><th>median</th><th>reference's gap to the bound</th>
<th>lost known SAM</th><th>lost unknown SAM</th><th>fuel-outs</th><th>safety actions</th>
<th>replan ms p50 / p95</th></tr>
{table}
</table>
<h2>Where each policy did worst</h2>
<p>Each run opens in the dashboard's replay view (start it with
<code>isr dashboard --db URL</code> on the same store).</p>
<table><tr><th>policy</th><th>share of reference</th><th>mission</th><th>disruption</th>
<th>drones lost</th><th>fuel-outs</th><th>replay</th></tr>
{worst}
</table>
{failures}
</body></html>
"""

_ABOUT = {
    "clairvoyant": (
        "The clairvoyant reference knows every event of the timeline and its time, and is "
        "the best flown score of its plan, of the first plan flown without replanning and of "
        "the plan made with full knowledge at t0 (planner.clairvoyant); its gap to the bound "
        "is how far below a relaxation upper bound it is (how much better a plan might be)."
    ),
    "full-knowledge-t0": (
        "No clairvoyant run in this batch: the reference is the plan made once with the whole "
        "timeline known at t0 as if it all held from the start (formerly called the oracle). "
        "It ignores when events happen: it is a comparison, not an upper bound, and shares "
        "above 100 % are expected."
    ),
}
