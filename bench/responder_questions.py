"""Questions in words, answered right: the responder's rules answers, and the number check
that stands between a model's answer and the operator.

    python bench/responder_questions.py [--json FILE]

Flies four scenarios (demo, new_target, lost_drone, popup_sam) headless to their end into
a fresh SQLite store with the real CLI, then asks each stored run about 25 questions
through the words layer (coordinator -> responder, rules engine): the seed's six example
prompts among them, fuel used / left / budgets / margins per drone and in total, points,
visited and unvisited targets, drones compared, why one target before another (right,
reversed and false premises), why a target went to a drone, what-ifs on a budget and on a
grounding fuel cut. Each question's right answer is computed here from the stored
telemetry, the stored scenario and the stored target_collected events -- not from the
responder's state -- and checked in the answer's text.

Then a fake model answers each question with the rules answer's numbers perturbed (each
moved by 7 %, at least 1) and, separately, with two drones' figures swapped; the share of
those wrong answers the number check catches is printed (target: all).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
if str(ROOT) not in sys.path:
    sys.path.insert(0, str(ROOT))

from typer.testing import CliRunner

from agents.engines import make_engine
from agents.responder import responder_rules
from agents.responder.numbers import number_problems, supported
from agents.responder.role import ResponderOutput
from agents.words.ask import answer
from agents.words.posted import posted_state
from agents.words.state import MissionState, replay_trace
from cli.main import build_app
from executive.traces import TraceReader
from executive.traces.sinks import ListSink

SCENARIOS = ("demo", "new_target", "lost_drone", "popup_sam")
SEED_PROMPTS = (
    "Which drone has the most fuel margin?",
    "Generate optimal routes maximizing priority points",
    "Move T5 from D1 to D2",
    "Why did D1 visit T3 before T5?",
    "What if we increase D1's fuel budget to 300?",
    "Continue from the current checkpoint",
)
Check = Callable[[dict[str, Any]], bool]


class Truth:
    """One stored run as the store holds it, read without the responder's code."""

    def __init__(self, reader: TraceReader, run_id: str) -> None:
        run = reader.run(run_id)
        row = reader.last_telemetry(run_id)
        configs = run["scenario"]["drone_configs"]
        self.drones = sorted(configs, key=lambda d: int(d) if d.isdigit() else 0)
        self.budget = {d: float(configs[d]["fuelBudget"]) for d in self.drones}
        self.fuel = {d: float(row["drones"][d]["fuel"]) for d in self.drones}
        self.status = {d: row["drones"][d]["status"] for d in self.drones}
        self.points = {d: float(row["drones"][d]["points"]) for d in self.drones}
        self.used = {d: self.budget[d] - self.fuel[d] for d in self.drones}
        self.order: dict[str, list[str]] = {d: [] for d in self.drones}
        for e in reader.events(run_id):
            if e["kind"] == "target_collected":
                self.order[str(e["payload"]["drone"])].append(str(e["payload"]["target"]))
        self.targets = [t["id"] for t in run["scenario"]["environment"]["targets"]]
        self.collected = {t: d for d, ts in self.order.items() for t in ts}
        self.x = {d: float(row["drones"][d]["x"]) for d in self.drones}
        self.y = {d: float(row["drones"][d]["y"]) for d in self.drones}
        self.lost = {
            str(e["payload"]["drone"]): e["payload"]
            for e in reader.events(run_id)
            if e["kind"] == "drone_lost"
        }
        env = run["scenario"]["environment"]
        self.type = {t["id"]: t["type"] for t in env["targets"]}
        self.priority = {t["id"]: float(t["priority"]) for t in env["targets"]}
        self.pos = {t["id"]: (float(t["x"]), float(t["y"])) for t in env["targets"]}
        # the SAMs known at the end: those not hidden, and the hidden ones detected
        seen = {
            str(e["payload"]["sam"]) for e in reader.events(run_id) if e["kind"] == "sam_detected"
        }
        self.sams = [
            (str(s["id"]), float(s["pos"][0]), float(s["pos"][1]), float(s["range"]))
            for s in env.get("sams", [])
            if not s.get("hidden") or str(s["id"]) in seen
        ]
        self.sensors = {d: configs[d].get("accessibleTargets") for d in self.drones}
        # the plan the run started with, as stored (tick 0): its route lengths and targets
        first = min(reader.plan_versions(run_id), key=lambda v: int(v["tick"]))
        routes = first["solution"]["routes"]
        self.first_km = {
            d: float(routes[d]["distance"]) if d in routes else 0.0 for d in self.drones
        }
        self.first_targets = {
            d: list(routes[d]["visited_targets"]) if d in routes else [] for d in self.drones
        }


def _label(d: str) -> str:
    return f"D{d}"


def questions(t: Truth) -> list[tuple[str, Check]]:
    """(question, check of the answer) pairs for one run."""
    q: list[tuple[str, Check]] = []
    alive = [d for d in t.drones if t.status[d] != "lost"]
    most_margin = max(alive, key=lambda d: (t.fuel[d], d))  # ended: margin = fuel left
    least_margin = min(alive, key=lambda d: (t.fuel[d], d))
    most_used = max(t.drones, key=lambda d: (t.used[d], d))
    least_used = min(t.drones, key=lambda d: (t.used[d], d))
    text: Callable[[str], Check] = lambda s: lambda out: s in out["answer"]  # noqa: E731
    starts: Callable[[str], Check] = lambda s: lambda out: out["answer"].startswith(s)  # noqa: E731
    q.append(
        ("Which drone has the most fuel margin?", starts(f"{_label(most_margin)} has the most"))
    )
    q.append(
        ("Which drone has the least fuel margin?", starts(f"{_label(least_margin)} has the least"))
    )
    q.append(("Which drone uses the most fuel?", starts(f"{_label(most_used)} uses the most fuel")))
    q.append(
        ("Which drone used the least fuel?", starts(f"{_label(least_used)} uses the least fuel"))
    )
    total = sum(t.used.values())
    q.append(("What is the total fuel used?", starts(f"Total fuel used: {total:.1f} km")))
    left = sum(t.budget.values()) - total
    q.append(("How much fuel is left in total?", text(f"{left:.1f} km left")))
    for d in t.drones:
        q.append((f"How much fuel did {_label(d)} use?", text(f"{t.used[d]:.1f} km used")))
        q.append((f"What is {_label(d)}'s fuel budget?", text(f"{_label(d)} {t.budget[d]:.1f} km")))
    q.append(
        ("How many points so far?", text(f"Points so far: {sum(t.points.values()):g} collected"))
    )
    best = max(t.drones, key=lambda d: (t.points[d], d))
    ties = [_label(d) for d in t.drones if t.points[d] == t.points[best]]
    q.append(("Which drone has the most points?", starts(" and ".join(ties))))
    n = len(t.collected)
    q.append(("Which targets were visited?", starts(f"{n} of ")))
    missing = [x for x in t.targets if x not in t.collected]
    q.append(
        (
            "Which targets were not visited?",
            lambda out: (
                all(x in out["answer"] for x in missing)
                and (bool(missing) or "No target is" in out["answer"])
            ),
        )
    )
    a, b = t.drones[0], t.drones[1]
    diff = abs(t.used[a] - t.used[b])
    q.append((f"Compare {_label(a)} and {_label(b)}", text(f"{diff:.1f} km more fuel than")))
    pair = next(
        ((d, ts[i], ts[i + 1]) for d, ts in t.order.items() for i in range(len(ts) - 1)), None
    )
    if pair is not None:
        d, x, y = pair
        other = next(o for o in t.drones if o != d)
        q.append(
            (
                f"Why did {_label(d)} visit {x} before {y}?",
                lambda out, d=d: (
                    out["answer"].startswith(f"{_label(d)} flies")
                    and "other order" in out["answer"]
                ),
            )
        )
        q.append(
            (
                f"Why did {_label(d)} visit {y} before {x}?",
                starts(f"{_label(d)} visits {x} before {y}, not {y} before {x}"),
            )
        )
        q.append(
            (
                f"Why did {_label(other)} visit {x} before {y}?",
                starts(f"The premise does not hold: {_label(other)} did not visit"),
            )
        )
        q.append((f"Why did {_label(d)} get {x}?", text(f"was collected by {_label(d)}")))
    for prompt in SEED_PROMPTS:
        q.append((prompt, lambda out: bool(out["answer"]) and "Traceback" not in out["answer"]))
    q.append(
        (
            "What if D2 had 5 fuel?",
            lambda out: out["errors"] == [] and "vehicle" not in out["answer"],
        )
    )
    return q


def _first_sentence_drones(text: str, lead: str) -> set[str] | None:
    """The drone labels of the sentence that starts with ``lead`` (None if none does)."""
    for sentence in text.split(". "):
        if sentence.startswith(lead):
            return set(re.findall(r"\bD\d+\b", sentence))
    return None


def _starts_one_of(labels: list[str]) -> Check:
    return lambda out: any(out["answer"].startswith(f"{x} has the") for x in labels)


def _ties(values: dict[str, float], best: float) -> list[str]:
    return [_label(d) for d, v in values.items() if abs(v - best) < 1e-9]


def ended_questions(t: Truth) -> list[tuple[str, Check]]:
    """The follow-up classes on the run at its end: fuel left (never the margin), lost
    drones' last state, home or not, points per drone, distance flown and still to fly,
    visiting order, why a target is excluded (SAM, sensor, fuel, collected)."""
    q: list[tuple[str, Check]] = []
    text: Callable[[str], Check] = lambda s: lambda out: s in out["answer"]  # noqa: E731
    alive = {d: t.fuel[d] for d in t.drones if t.status[d] != "lost"}
    for prompt, pick in (
        ("Which drone has the most fuel left?", max),
        ("Which drone has the most fuel remaining?", max),
        ("Which drone has the least fuel left?", min),
        ("Which UAV has the lowest remaining fuel?", min),
    ):
        q.append((prompt, _starts_one_of(_ties(alive, pick(alive.values())))))
    a, b = t.drones[0], t.drones[-1]
    pair = {d: alive[d] for d in (a, b) if d in alive}
    if pair:
        q.append(
            (
                f"Which has more fuel left, {_label(a)} or {_label(b)}?",
                _starts_one_of(_ties(pair, max(pair.values()))),
            )
        )
    for d in t.drones:
        if d in t.lost:
            x, y = t.lost[d]["pos"]
            q.append(
                (
                    f"How much fuel does {_label(d)} have left?",
                    text(f"{t.fuel[d]:.1f} km of fuel left when lost at ({x:.1f}, {y:.1f})"),
                )
            )
            q.append(
                (
                    f"Where was {_label(d)} lost and what did it have?",
                    lambda out, d=d, x=x, y=y: (
                        f"at ({x:.1f}, {y:.1f}) with {t.fuel[d]:.1f} km of fuel left"
                        in out["answer"]
                        and f"collected {t.points[d]:g} points" in out["answer"]
                    ),
                )
            )
            q.append(
                (
                    f"How far does {_label(d)} still have to fly?",
                    text(f"{_label(d)}: none, it is lost"),
                )
            )
        else:
            q.append(
                (
                    f"How much fuel does {_label(d)} have left?",
                    text(f"{_label(d)} has {t.fuel[d]:.1f} km of fuel left"),
                )
            )
        q.append(
            (
                f"How many points did {_label(d)} collect?",
                text(f"{_label(d)} collected {t.points[d]:g} points"),
            )
        )
        q.append((f"How far has {_label(d)} flown?", text(f"{_label(d)}: {t.used[d]:.1f} km used")))
        if len(t.order[d]) >= 2:
            q.append(
                (
                    f"In what order did {_label(d)} visit its targets?",
                    text(f"{', '.join(t.order[d])} (in that order)"),
                )
            )
    lost = {_label(d) for d in t.drones if t.status[d] == "lost"}
    home = {_label(d) for d in t.drones} - lost
    q.append(
        (
            "Which drone is NOT going to make it home?",
            lambda out: _first_sentence_drones(out["answer"], "Not making it home") == lost,
        )
    )
    q.append(
        (
            "Which drones make it back?",
            lambda out: _first_sentence_drones(out["answer"], "Making it home") == home,
        )
    )
    first_collected = next((x for x in t.targets if x in t.collected), None)
    if first_collected is not None:
        q.append(
            (
                f"Why was {first_collected} excluded?",
                text(f"not excluded: {_label(t.collected[first_collected])} collected it"),
            )
        )
    for x in t.targets:
        if x in t.collected:
            continue
        tx, ty = t.pos[x]
        inside = [s for s in t.sams if math.hypot(tx - s[1], ty - s[2]) < s[3]]
        able = [
            d
            for d in t.drones
            if t.status[d] != "lost"
            and (t.sensors[d] in (None, "ALL") or t.type[x] in t.sensors[d])
        ]
        if inside:
            want = f"inside {inside[0][0]}"
        elif not able:
            want = f"no drone left can sense type {t.type[x]}"
        else:
            want = "no drone's fuel covered it"
        q.append((f"Why was {x} skipped?", text(want)))
    return q


def start_questions(t: Truth) -> list[tuple[str, Check]]:
    """At tick 0 under the plan the run started with: fuel left (= the budget) against the
    margin (budget minus the route's length), the path to fly, the points planned."""
    q: list[tuple[str, Check]] = []
    text: Callable[[str], Check] = lambda s: lambda out: s in out["answer"]  # noqa: E731
    margin = {d: t.budget[d] - t.first_km[d] for d in t.drones}
    for prompt, values, pick in (
        ("Which drone has the most fuel left?", t.budget, max),
        ("Which drone has the least fuel left?", t.budget, min),
        ("Which drone has the most fuel margin?", margin, max),
        ("Which drone has the smallest fuel margin?", margin, min),
    ):
        q.append((prompt, _starts_one_of(_ties(values, pick(values.values())))))
    short = {_label(d) for d in t.drones if margin[d] < 0}
    q.append(
        (
            "Which drone will not make it home?",
            lambda out: _first_sentence_drones(out["answer"], "Not making it home") == short,
        )
    )
    for d in t.drones:
        q.append(
            (
                f"How far does {_label(d)} still have to fly?",
                text(f"{_label(d)}: {t.first_km[d]:.1f} km still to fly"),
            )
        )
        pts = sum(t.priority[x] for x in t.first_targets[d])
        q.append(
            (
                f"How many points does {_label(d)} have planned?",
                text(f"{pts:g} points still planned"),
            )
        )
    return q


def no_plan_questions(t: Truth) -> list[tuple[str, Check]]:
    """A posted mission with no plan: the answer says so first and gives no route figure."""

    def said(s: str) -> Check:
        return lambda out: (
            out["answer"].startswith("No plan yet — plan first?") and s in out["answer"]
        )

    d = t.drones[0]
    return [
        ("Which drone has the most fuel margin?", said("no margin")),
        ("How many points are planned?", said("no margin")),
        (f"How far does {_label(d)} still have to fly?", said("no route")),
        ("Which drone is not going to make it home?", said("no route")),
        (
            f"How much fuel does {_label(d)} have left?",
            said(f"{_label(d)} has {t.budget[d]:.1f} km of fuel left"),
        ),
    ]


def _perturb(text: str) -> str:
    def bump(m: re.Match[str]) -> str:
        v = float(m.group(0))
        decimals = len(m.group(0).split(".")[1]) if "." in m.group(0) else 0
        return f"{v + max(1.0, abs(v) * 0.07):.{decimals}f}"

    return re.sub(r"(?<![A-Za-z0-9_.])\d+(?:\.\d+)?(?![A-Za-z0-9_])", bump, text)


def _swap(text: str, state: MissionState) -> str | None:
    """The answer with the first two drones' fuel figures swapped, or None if it has none."""
    ds = [d for d in state.drones.values()]
    for a_, b_ in ((ds[0], ds[1]), (ds[1], ds[2]) if len(ds) > 2 else (ds[0], ds[1])):
        fa, fb = f"{a_.fuel:.1f}", f"{b_.fuel:.1f}"
        if fa != fb and fa in text and fb in text:
            return text.replace(fa, "\0").replace(fb, fa).replace("\0", fb)
    return None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--json", help="write the figures to this file")
    args = parser.parse_args()
    app = build_app()
    runner = CliRunner()
    rows: list[dict[str, Any]] = []
    caught = {"perturbed": [0, 0], "swapped": [0, 0]}
    with tempfile.TemporaryDirectory() as tmp:
        url = f"sqlite:///{Path(tmp) / 'runs.db'}"
        for name in SCENARIOS:
            done = runner.invoke(
                app,
                [
                    "run",
                    str(ROOT / "scenarios" / f"{name}.json"),
                    "--headless",
                    "--db",
                    url,
                    "--json",
                ],
            )
            if done.exit_code != 0:
                raise SystemExit(f"{name}: isr run failed: {done.output}")
            run_id = json.loads(done.stdout.strip().splitlines()[-1])["run_id"]
            reader = TraceReader(url)
            try:
                state, world = replay_trace(reader, run_id)
                truth = Truth(reader, run_id)
            finally:
                reader.close()
            assert state.first_plan is not None, name
            start = posted_state(state.scenario, state.first_plan, run_id)
            bare = posted_state(state.scenario, None, run_id)
            asked = [(q_, c_, state, "end", False) for q_, c_ in questions(truth)]
            asked += [(q_, c_, state, "end", True) for q_, c_ in ended_questions(truth)]
            asked += [(q_, c_, start, "tick 0", True) for q_, c_ in start_questions(truth)]
            asked += [(q_, c_, bare, "no plan", True) for q_, c_ in no_plan_questions(truth)]
            for question, check, state_, at, new in asked:
                out = asyncio.run(
                    answer(
                        question, state_, engine=make_engine("rules"), sink=ListSink(), world=world
                    )
                )
                ok = bool(check(out))
                rows.append(
                    {
                        "run": name,
                        "at": at,
                        "new": new,
                        "question": question,
                        "right": ok,
                        "answer": out["answer"],
                    }
                )
                if not ok:
                    print(
                        f"WRONG [{name}, {at}] {question}\n  {out['answer']}\n"
                        f"  errors: {out['errors']}"
                    )
                if state_ is not state:
                    continue  # the number check is measured on the stored runs' states
                if out["intent"] not in ("question", "explain", "unknown") or out.get("what_if"):
                    continue
                rules = responder_rules(question, state)
                facts = supported(state, rules, None, question)
                for kind, wrong in (
                    ("perturbed", _perturb(rules["answer"])),
                    ("swapped", _swap(rules["answer"], state)),
                ):
                    if wrong is None or wrong == rules["answer"]:
                        continue
                    problems = number_problems(ResponderOutput(answer=wrong), facts, state)
                    caught[kind][0] += bool(problems)
                    caught[kind][1] += 1
                    if not problems:
                        print(f"MISSED {kind} [{name}] {question}\n  {wrong}")
    right = sum(r["right"] for r in rows)
    new_rows = [r for r in rows if r["new"]]
    new_right = sum(r["right"] for r in new_rows)
    figures = {
        "runs": len(SCENARIOS),
        "questions": len(rows),
        "answered_right": right,
        "share_right": right / len(rows),
        "new_questions": len(new_rows),
        "new_answered_right": new_right,
        "wrong_answers_caught": {k: {"caught": c, "of": n} for k, (c, n) in caught.items()},
    }
    print(f"questions: {len(rows)} over {len(SCENARIOS)} stored runs")
    print(
        f"answered right by the rules engine: {right} of {len(rows)} ({100 * right / len(rows):.1f} %)"
    )
    print(
        f"  of them the follow-up classes (fuel left, home, lost drones, points, distance,"
        f" order, exclusions; at the end, at tick 0, with no plan): {new_right} of {len(new_rows)}"
    )
    for kind, (c, n) in caught.items():
        print(f"wrong model answers ({kind} numbers) caught by the number check: {c} of {n}")
    if args.json:
        Path(args.json).write_text(json.dumps({"figures": figures, "rows": rows}, indent=1))


if __name__ == "__main__":
    main()
