"""Operator sentences through ``POST /api/agent_solve``: honoured, refused with the right
reason, silently dropped, misclassified (issue 25).

    python bench/operator_sentences.py [--iterations 500]

Over the demo and two generated missions (``planner.scenario.generator``, seed 7), each
sentence is built from the scenario (a target a drone can sense, one inside a SAM, a
priority that exists ...) with what it asks of the plan written next to it. The real app is
served on 127.0.0.1 and every answer is judged by an independent checker
(``tests/operator_check.py``: the scenario and the answered routes only, never the
coordinator's decision):

* honoured: the request succeeded, the checker finds the plan keeps every expectation, and
  nothing was refused;
* refused with reason: the answer refused it, naming the expected reason;
* silently dropped: the request succeeded, nothing was refused, and the plan breaks it;
* misclassified: anything else (refused what should hold, or the wrong reason).

Then sentences said to a live demo run (the ``/api/ask`` pipeline), among them moves whose
other drones must keep their routes from the cut onward (checked on the two plans alone).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import math
import sys
import time
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from dashboard.server import start_dashboard
from executive.bus import InProcessBus
from planner.scenario.generator import SuiteSpec, generate_mission
from tests.operator_check import Expect, check_plan

TOKEN = "bench-operator-sentences"


@dataclass
class Case:
    scenario: str
    sentence: str
    expects: list[Expect] = field(default_factory=list)
    refuse: str | None = None  # the reason expected ("fuel", "sensor", "excluded", ...)
    existing: bool = False  # posted with the scenario's first plan as existing_solution
    conflict: bool = False  # two orders conflict: the last must win, and be said


def _sensors(cfg: dict[str, Any]) -> Any:
    return cfg.get("accessibleTargets", cfg.get("accessible_targets", "ALL"))


def _senses(cfg: dict[str, Any], target: dict[str, Any]) -> bool:
    s = _sensors(cfg)
    return s == "ALL" or target["type"] in s


def _inside(sc: dict[str, Any], t: dict[str, Any]) -> bool:
    return any(
        math.dist((t["x"], t["y"]), s["pos"]) < s["range"] for s in sc["environment"]["sams"]
    )


def _start(sc: dict[str, Any], d: str) -> tuple[float, float]:
    cfg = sc["drone_configs"][d]
    a = cfg.get("start_airport") or cfg.get("home_airport")
    where = {x["id"]: (x["x"], x["y"]) for x in sc["environment"]["airports"]}
    return where.get(a, next(iter(where.values())))


def cases_for(name: str, sc: dict[str, Any]) -> list[Case]:
    """The sentences of one scenario (a class is left out when the scenario has no case)."""
    targets = sc["environment"]["targets"]
    drones = list(sc["drone_configs"])
    open_ = sorted(
        (t for t in targets if not _inside(sc, t)), key=lambda t: (-t["priority"], t["id"])
    )
    inside = [t for t in targets if _inside(sc, t)]
    prios = sorted({float(t["priority"]) for t in open_})
    mid = prios[len(prios) // 2]
    lab = {d: f"D{d}" for d in drones}
    out: list[Case] = []

    def add(sentence: str, **kw: Any) -> None:
        out.append(Case(name, sentence, **kw))

    t1, t2 = open_[0], open_[1]
    pairs = [(d, t) for t in open_ for d in drones if _senses(sc["drone_configs"][d], t)]
    (pd, pt), (qd, qt) = pairs[0], pairs[len(pairs) // 2]
    # honoured
    add(f"do not visit {t1['id']}", expects=[Expect("forbid", target=t1["id"])])
    add(f"plan the mission without {t2['id']}", expects=[Expect("forbid", target=t2["id"])])
    add(
        f"{lab[pd]} must not visit {pt['id']}",
        expects=[Expect("forbid", target=pt["id"], drone=pd)],
    )
    add(
        f"never let {lab[qd]} visit {qt['id']}",
        expects=[Expect("forbid", target=qt["id"], drone=qd)],
    )
    add(
        f"Plan the mission visiting only targets with priority {mid:g} or higher",
        expects=[Expect("min_priority", value=mid)],
    )
    add(
        f"{lab[drones[0]]} may not visit priority {prios[-1]:g} targets",
        expects=[Expect("not_priority", drone=drones[0], value=prios[-1])],
    )
    add(f"no targets below priority {prios[1]:g}", expects=[Expect("min_priority", value=prios[1])])
    add(
        f"only targets with priority at least {mid:g}",
        expects=[Expect("min_priority", value=mid)],
    )
    add("keep 20 km in reserve", expects=[Expect("reserve", drone=d, value=20) for d in drones])
    add(
        f"{lab[drones[-1]]} keeps 30 km of fuel in reserve",
        expects=[Expect("reserve", drone=drones[-1], value=30)],
    )
    add(f"make sure {t1['id']} is visited", expects=[Expect("require", target=t1["id"])])
    d = drones[-1]
    near = min(
        (t for t in open_ if _senses(sc["drone_configs"][d], t)),
        key=lambda t: math.dist(_start(sc, d), (t["x"], t["y"])),
    )
    add(
        f"move {near['id']} to {lab[d]}",
        expects=[
            Expect("require", target=near["id"]),
            *(Expect("forbid", target=near["id"], drone=x) for x in drones if x != d),
        ],
    )
    # paraphrases an operator may use (not tuned to the parser)
    add(f"avoid {t2['id']}", expects=[Expect("forbid", target=t2["id"])])
    add(f"skip {t1['id']}", expects=[Expect("forbid", target=t1["id"])])
    add(f"exclude {t2['id']} from the plan", expects=[Expect("forbid", target=t2["id"])])
    add(f"ignore targets below priority {mid:g}", expects=[Expect("min_priority", value=mid)])
    add(
        f"{lab[drones[0]]} should leave 25 km spare",
        expects=[Expect("reserve", drone=drones[0], value=25)],
    )
    # refused
    budget = max(
        float(c.get("fuelBudget", c.get("fuel_budget", 0))) for c in sc["drone_configs"].values()
    )
    add(f"{lab[drones[0]]} keeps {budget + 100:g} km in reserve", refuse="fuel")
    blind = [(d, t) for t in open_ for d in drones if not _senses(sc["drone_configs"][d], t)]
    if blind:
        d, t = blind[0]
        add(f"move {t['id']} to {lab[d]}", refuse="sensor")
    if inside:
        add(f"make sure {inside[0]['id']} is visited", refuse="excluded")
    add("do not visit T999", refuse="unknown")
    add("do not recompute routes", refuse="no existing")
    # conflicting: the last order wins, and is said
    add(
        f"make sure {t2['id']} is visited, then do not visit {t2['id']}",
        expects=[Expect("forbid", target=t2["id"])],
        conflict=True,
    )
    add(
        f"do not visit {t1['id']}, then make sure {t1['id']} is visited",
        expects=[Expect("require", target=t1["id"])],
        conflict=True,
    )
    add(
        f"move {pt['id']} to {lab[pd]} then {lab[pd]} must not visit {pt['id']}",
        expects=[Expect("forbid", target=pt["id"], drone=pd)],
        conflict=True,
    )
    add(
        "keep 20 km in reserve then keep 40 km in reserve",
        expects=[Expect("reserve", drone=d, value=40) for d in drones],
        conflict=True,
    )
    # on the existing plan
    for s in (
        "Optimize the mission to maximize points, but do not recompute routes",
        "keep the allocation",
        "only reorder",
    ):
        add(s, expects=[Expect("keep_routes")], existing=True)
    add(f"do not visit {t1['id']} and do not recompute routes", refuse="kept", existing=True)
    return out


def _body(sc: dict[str, Any], message: str, iterations: int, existing: dict | None) -> dict:
    body: dict[str, Any] = {
        "user_message": message,
        "environment": sc["environment"],
        "drone_configs": sc["drone_configs"],
        "preferences": {"iterations": iterations},
    }
    if existing is not None:
        body["existing_solution"] = {
            "routes": {d: {"route": r["route"]} for d, r in existing["routes"].items()}
        }
    return body


def judge(case: Case, sc: dict[str, Any], answer: dict, existing: dict | None) -> tuple[str, str]:
    """(class, why) for one answer."""
    refused = answer.get("constraints_refused") or []
    said = answer.get("response", "") + " " + " ".join(answer.get("warnings", []))
    if case.refuse is not None:
        reasons = {r["reason"] for r in refused}
        text = said.lower()
        right = (
            case.refuse in reasons
            or (case.refuse == "unknown" and "t999" in text)
            or (case.refuse == "no existing" and "no existing solution" in text)
            or (case.refuse == "kept" and "kept" in reasons)
        )
        if right:
            return "refused with reason", ""
        if answer.get("success") and not refused:
            return "silently dropped", "succeeded, nothing refused"
        return "misclassified", f"refused with {sorted(reasons)}: {said[:120]!r}"
    if not answer.get("success") or refused:
        return "misclassified", f"refused: {refused or said[:120]!r}"
    broken = [p for e in case.expects for p in check_plan(e, sc, answer, existing)]
    if broken:
        return "silently dropped", "; ".join(broken)[:160]
    if case.conflict and "replaces" not in said:
        return "misclassified", "conflict resolved but not said"
    return "honoured", ""


def _scenarios() -> dict[str, dict[str, Any]]:
    out = {"demo": json.loads((ROOT / "scenarios" / "demo.json").read_text())}
    spec = SuiteSpec(name="bench", seed=7, count=2, drones=(3, 4), targets=(15, 25), sams=(2, 4))
    for i in range(2):
        out[f"generated[{i}]"] = generate_mission(spec, i).scenario
    return out


LIVE = [  # the demo, said to a live run at tick 100; checked on the plan in force at tick 400
    ("do not visit T8", [Expect("forbid", target="T8")]),
    ("plan the mission without T1", [Expect("forbid", target="T1")]),
    ("D3 must not visit T2", [Expect("forbid", target="T2", drone="3")]),
    ("only targets with priority 7 or higher", [Expect("min_priority", value=7)]),
    ("D3 may not visit priority 10 targets", [Expect("not_priority", drone="3", value=10)]),
    ("ignore targets below priority 6", [Expect("min_priority", value=6)]),
    ("keep 20 km in reserve", []),  # the reserve counts from the checkpoint: see below
    ("make sure T1 is visited, then do not visit T1", [Expect("forbid", target="T1")]),
]
LIVE_REFUSED = [("D2 keeps 300 km in reserve", "fuel"), ("move T5 to D1", "sensor")]
# a move said live re-plans only the drones it names: (sentence, target, its new drone)
LIVE_MOVES = [
    ("move T2 to D1", "T2", "1"),
    ("move T8 to D1", "T8", "1"),
    ("give T5 to D3", "T5", "3"),
]


def _kept_others(before: dict, after: dict, target: str, to: str) -> list[str]:
    """What a live move broke: the target not on its new drone, or a drone it does not name
    (neither ``to`` nor the target's drone before) whose route from its start on changed.
    Read from the two plans only (said at tick 100 of the demo: nothing is collected or
    frozen before the cut, so each route after its start is compared whole)."""
    was = {d: r["route"] for d, r in before["routes"].items()}
    now = {d: r["route"] for d, r in after["routes"].items()}
    out = [] if target in now.get(to, []) else [f"{target} is not on {to}"]
    held = next((d for d, r in was.items() if target in r), None)
    for d, route in now.items():
        if d not in (to, held) and route[1:] != was.get(d, [None])[1:]:
            out.append(f"{d} changed though the move does not name it: {was.get(d)} -> {route}")
    return out


async def live(iterations: int) -> Counter[str]:
    """The same pipeline as ``POST /api/ask`` (``agents.words.ask``) on a live executive."""
    from agents.engines import make_engine
    from agents.planning.round import AgentPlanner
    from agents.words.ask import answer
    from agents.words.command import coordinate_live
    from agents.words.state import from_executive
    from executive.loop import Executive
    from executive.loop.options import LoopOptions
    from executive.loop.policy import Policy
    from executive.traces.sinks import ListSink
    from planner.scenario import load_scenario

    raw = json.loads((ROOT / "scenarios" / "demo.json").read_text())
    tally: Counter[str] = Counter()
    cases = [(s, e, None) for s, e in LIVE] + [(s, [], r) for s, r in LIVE_REFUSED]
    cases.append(("do not recompute routes", [Expect("keep_routes")], None))
    cases += [(s, [], None) for s, _, _ in LIVE_MOVES]
    moves = {s: (t, d) for s, t, d in LIVE_MOVES}
    for sentence, expects, refuse in cases:
        sink = ListSink()
        planner = AgentPlanner(make_engine("rules"), sink, iterations=iterations, use_agents=False)
        ex = Executive(
            load_scenario(ROOT / "scenarios" / "demo.json"),
            planner=planner,
            sink=sink,
            options=LoopOptions(policy=Policy()),
            coordinate=coordinate_live,
        )
        await ex.start()
        await ex.run(None, until=100)
        before = ex.plan.model_dump(mode="json")
        out = await answer(
            sentence, from_executive(ex), engine=make_engine("rules"), sink=sink, live=ex
        )
        await ex.run(None, until=400)
        plan = ex.plan.model_dump(mode="json")
        report = out.get("constraint_report") or {}
        if refuse is not None:
            reasons = {r["reason"] for r in report.get("refused", [])}
            verdict = (
                "refused with reason"
                if refuse in reasons
                else "silently dropped"
                if out["applied"]
                else "misclassified"
            )
        elif out["errors"]:
            verdict = "misclassified"
        else:
            existing = before if expects and expects[0].kind == "keep_routes" else None
            broken = [p for e in expects for p in check_plan(e, raw, plan, existing)]
            if sentence.startswith("keep 20"):
                broken = [] if ex.constraints.fuel_reserve.get("1") == 20 else ["not in force"]
            if sentence in moves:
                broken = _kept_others(before, plan, *moves[sentence])
            verdict = "silently dropped" if broken else "honoured"
        tally[verdict] += 1
        mark = "" if verdict in ("honoured", "refused with reason") else "  <--"
        print(f"live demo     {verdict:20} {sentence!r}{mark}")
    return tally


async def main(iterations: int) -> None:
    server = await start_dashboard(InProcessBus(), host="127.0.0.1", port=0, token=TOKEN)
    tally: Counter[str] = Counter()
    by_kind: dict[str, Counter[str]] = {}
    t0 = time.perf_counter()
    try:
        async with httpx.AsyncClient(base_url=server.url, timeout=120) as http:

            async def solve(sc: dict, message: str, existing: dict | None = None) -> dict:
                r = await http.post(
                    "/api/agent_solve", json=_body(sc, message, iterations, existing)
                )
                return r.json()

            for name, sc in _scenarios().items():
                planned = await solve(sc, "Generate optimal routes")
                for case in cases_for(name, sc):
                    existing = planned if case.existing else None
                    answer = await solve(sc, case.sentence, existing)
                    verdict, why = judge(case, sc, answer, existing)
                    tally[verdict] += 1
                    kind = "refuse" if case.refuse else "conflict" if case.conflict else "honour"
                    by_kind.setdefault(kind, Counter())[verdict] += 1
                    mark = "" if verdict in ("honoured", "refused with reason") else "  <--"
                    print(f"{name:13} {verdict:20} {case.sentence!r} {why}{mark}")
    finally:
        await server.stop()
    total = sum(tally.values())
    print(
        f"\n{total} sentences, 3 scenarios, /api/agent_solve, {iterations} iterations,"
        f" {time.perf_counter() - t0:.0f} s"
    )
    for verdict in ("honoured", "refused with reason", "silently dropped", "misclassified"):
        print(f"  {verdict:20} {tally[verdict]:3}  {tally[verdict] / total:6.1%}")
    for kind, c in by_kind.items():
        print(f"  expected {kind:9}: " + ", ".join(f"{k} {v}" for k, v in sorted(c.items())))
    t1 = time.perf_counter()
    lives = await live(iterations)
    total = sum(lives.values())
    print(
        f"\n{total} sentences said to a live demo run (the ask pipeline), {time.perf_counter() - t1:.0f} s"
    )
    for verdict in ("honoured", "refused with reason", "silently dropped", "misclassified"):
        print(f"  {verdict:20} {lives[verdict]:3}  {lives[verdict] / total:6.1%}")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--iterations", type=int, default=500)
    args = parser.parse_args()
    asyncio.run(main(args.iterations))
