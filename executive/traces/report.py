"""A traced run as a static page to share: the map of the flown paths, the charts and the
event list (``isr report``). The pictures are drawn with matplotlib and embedded in the
HTML (no other file, no script); with a ``.png`` out, the map and the charts alone.
"""

from __future__ import annotations

import base64
import html
import io
from pathlib import Path
from typing import Any

import matplotlib

matplotlib.use("Agg")  # files only; never open a window
import matplotlib.pyplot as plt
from matplotlib.figure import Figure
from matplotlib.patches import Circle

from executive.traces import analysis
from executive.traces.reader import TraceReader
from executive.traces.timeline import state_at

__all__ = ["render_report"]

_COLOURS = plt.get_cmap("tab10")


def _map(ax: Any, scene: dict[str, Any], tracks: dict[str, list[list[float]]]) -> None:
    for sam in scene.get("sams", []):
        known = sam.get("known", True)
        ax.add_patch(
            Circle(
                (sam["x"], sam["y"]),
                sam["range"],
                color="tab:red",
                alpha=0.15 if known else 0.05,
                lw=0,
            )
        )
        ax.add_patch(
            Circle(
                (sam["x"], sam["y"]),
                sam["range"],
                fill=False,
                color="tab:red",
                lw=1,
                ls="-" if known else "--",
            )
        )
        ax.annotate(sam["id"], (sam["x"], sam["y"]), ha="center", fontsize=7, color="darkred")
    for i, (drone_id, track) in enumerate(sorted(tracks.items())):
        if len(track) > 1:
            xs, ys = zip(*track)
            ax.plot(xs, ys, color=_COLOURS(i % 10), lw=1.6, label=f"drone {drone_id}")
        d = scene.get("drones", {}).get(drone_id, {})
        if d.get("status") == "lost" and "x" in d:
            ax.plot(d["x"], d["y"], "x", color="black", ms=9, mew=2)
    for t in scene.get("targets", []):
        done = t.get("status") == "collected"
        ax.plot(
            t["x"],
            t["y"],
            "o",
            ms=4 + float(t.get("priority", 1)),
            mfc="tab:green" if done else "white",
            mec="black",
        )
        ax.annotate(
            t["id"], (t["x"], t["y"]), xytext=(3, 3), textcoords="offset points", fontsize=6
        )
    for a in scene.get("airports", []):
        ax.plot(a["x"], a["y"], "s", color="navy", ms=7)
        ax.annotate(
            a["id"], (a["x"], a["y"]), xytext=(3, -9), textcoords="offset points", fontsize=7
        )
    ax.set_aspect("equal")
    ax.set_xlabel("x (km)")
    ax.set_ylabel("y (km)")
    ax.legend(fontsize=7, loc="best")


def _charts(axes: Any, s: dict[str, Any]) -> None:
    hz = s["tick_hz"]
    minutes = [t / hz / 60 for t in s["ticks"]]
    points, fuel, rounds = axes
    points.plot(minutes, s["collected"], label="collected", color="tab:green")
    points.plot(minutes, s["planned"], label="planned", color="tab:blue", ls="--")
    points.set_ylabel("points")
    points.legend(fontsize=7)
    for i, (drone_id, values) in enumerate(sorted(s["fuel"].items())):
        pairs = [(m, v) for m, v in zip(minutes, values) if v is not None]
        if pairs:
            xs, ys = zip(*pairs)
            fuel.plot(xs, ys, color=_COLOURS(i % 10), label=f"drone {drone_id}")
    fuel.axhline(s["reserve"], color="grey", ls=":", label="reserve")
    fuel.set_ylabel("fuel (km)")
    fuel.legend(fontsize=7)
    done = [r for r in s["rounds"] if r["latency_ms"] is not None]
    rounds.bar(
        [r["tick"] / hz / 60 for r in done],
        [r["latency_ms"] for r in done],
        width=max(minutes[-1] / 150, 0.05) if minutes else 0.1,
        color=[
            "tab:blue" if r["status"] in ("committed", "superseded") else "tab:orange" for r in done
        ],
    )
    rounds.set_ylabel("replan latency (ms)")
    rounds.set_xlabel("mission time (min)")


def _figure(reader: TraceReader, run: dict[str, Any]) -> Figure:
    s = analysis.series(reader, run, points=800)
    last = s["ticks"][-1] if s["ticks"] else 0
    scene = state_at(reader, run, last)
    tracks = {d: v.get("flown") or [] for d, v in scene.get("drones", {}).items()}
    fig = plt.figure(figsize=(14, 8), dpi=100)
    grid = fig.add_gridspec(3, 2, width_ratios=[1.25, 1])
    _map(fig.add_subplot(grid[:, 0]), scene, tracks)
    _charts([fig.add_subplot(grid[i, 1]) for i in range(3)], s)
    outcome = run.get("outcome") or {}
    fig.suptitle(
        f"run {run['run_id']} — {run['status']} — {outcome.get('total_points', scene.get('collected_points', 0)):g} points"
    )
    fig.tight_layout()
    return fig


def render_report(reader: TraceReader, run_id: str, out: Path) -> Path:
    """Write the report of ``run_id`` to ``out`` (``.html`` or ``.png``); return ``out``."""
    run = reader.run(run_id)
    fig = _figure(reader, run)
    if out.suffix.lower() == ".png":
        fig.savefig(out)
        plt.close(fig)
        return out
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png")
    plt.close(fig)
    picture = base64.b64encode(buffer.getvalue()).decode("ascii")
    events = reader.events(run["run_id"])
    marks = {m["tick"]: m for m in analysis.markers(events)}
    hz = float((run.get("scenario") or {}).get("sim", {}).get("tick_hz", 20.0))
    rows = "\n".join(
        f"<tr class='{'mark' if e['tick'] in marks else ''}'><td>{e['tick']}</td>"
        f"<td>{e['tick'] / hz:.1f}</td><td>{html.escape(e['kind'])}</td>"
        f"<td>{html.escape(_short(e['payload']))}</td></tr>"
        for e in events
        if not e["kind"].startswith("truth:")
    )
    plans = "\n".join(
        f"<tr><td>{p['tick']}</td><td>{html.escape(p['status'])}</td>"
        f"<td>{html.escape(p['trigger'])}</td><td>{p['points']:g}</td>"
        f"<td>{p['points_delta']:+g}</td><td>{p['fuel_delta']:+.1f}</td>"
        f"<td>{(p['latency_ms'] or 0):.0f}</td><td>{html.escape(', '.join(p['changed']))}</td></tr>"
        for p in analysis.plan_history(reader, run["run_id"])
    )
    outcome = run.get("outcome") or {}
    summary = ", ".join(
        f"{k}: {html.escape(str(outcome.get(k)))}"
        for k in ("total_points", "lost", "ticks", "sim_seconds")
        if k in outcome
    )
    parent = run.get("parent_run_id")
    out.write_text(
        _PAGE.format(
            run=html.escape(run["run_id"]),
            status=html.escape(run["status"]),
            parent=f"<p>fork of run {html.escape(parent)} at tick {(run.get('config') or {}).get('fork', {}).get('tick')}</p>"
            if parent
            else "",
            summary=summary or "no outcome recorded (the run did not end)",
            picture=picture,
            plans=plans,
            events=rows,
            count=len(events),
        ),
        encoding="utf-8",
    )
    return out


def _short(payload: Any, limit: int = 160) -> str:
    text = str(payload)
    return text if len(text) <= limit else text[: limit - 1] + "…"


_PAGE = """<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>ISR run {run}</title>
<style>
body {{ font: 14px system-ui, sans-serif; margin: 2em; color: #222; }}
img {{ max-width: 100%; border: 1px solid #ddd; }}
table {{ border-collapse: collapse; font-size: 12px; }}
td, th {{ border-bottom: 1px solid #eee; padding: 2px 8px; text-align: left; }}
tr.mark td {{ background: #fff6d8; }}
</style></head><body>
<h1>Run {run} — {status}</h1>
{parent}
<p>{summary}</p>
<img alt="map of the flown paths and the run's charts" src="data:image/png;base64,{picture}">
<h2>Plans</h2>
<table><tr><th>tick</th><th>status</th><th>trigger</th><th>points</th><th>&Delta; points</th>
<th>&Delta; fuel</th><th>latency ms</th><th>changed</th></tr>
{plans}
</table>
<h2>Events ({count})</h2>
<table><tr><th>tick</th><th>t (s)</th><th>kind</th><th>payload</th></tr>
{events}
</table>
</body></html>
"""
