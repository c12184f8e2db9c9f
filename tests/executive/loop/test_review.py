"""Review: nothing flies that the operator did not approve. A draft waits as long as needed;
an ACCEPT that comes after its cut flies the draft rebased onto the state then (the same
targets, minus what was collected meanwhile); a rebase that had to drop a target is a new
draft for review; a timeout keeps the plan in force or commits the draft, by policy."""

from __future__ import annotations

import asyncio
from typing import Any

from agents.engines import make_engine
from agents.planning.round import AgentPlanner
from executive.contracts import EventRecord, HumanCommand, PlanVersionRecord
from executive.loop import Executive, Policy
from executive.loop.options import LoopOptions
from executive.loop.review import remainder_diff
from executive.traces.audit import lost_to_known_sams, unapproved_commits
from executive.traces.sinks import ListSink
from planner.edits import parse_edit
from planner.scenario import load_scenario
from tests.conftest import SCENARIOS

HZ = 20


def _review(**policy: Any) -> Policy:
    return Policy(commit="review", batch_iterations=400, **policy)


def _events(sink: ListSink, kind: str) -> list[EventRecord]:
    return [r for r in sink.of(EventRecord) if r.kind == kind]


def _run(name: str, policy: Policy, operator=None, speed: float | None = None):
    """Run ``name`` with an operator: ``operator(executive, result)`` after every tick."""
    sink = ListSink()
    executive = Executive(
        load_scenario(SCENARIOS / name),
        planner=AgentPlanner(make_engine("rules"), sink, iterations=400, use_agents=False),
        sink=sink,
        options=LoopOptions(policy=policy),
    )
    if operator is not None:
        executive.watch(on_tick=lambda result: operator(executive, result))
    report = asyncio.run(executive.run(speed))
    return executive, sink, report


def _accept_after(seconds: float):
    """An operator who ACCEPTs every draft ``seconds`` of mission time after it is ready."""
    due: list[int] = []
    seen: set[str] = set()

    def operator(executive, result) -> None:
        draft = executive.rounds.review
        if draft is not None and draft.plan_id not in seen:
            seen.add(draft.plan_id)
            due.append(result.tick + int(seconds * HZ))
        while due and result.tick >= due[0]:
            due.pop(0)
            executive.command(HumanCommand("ACCEPT"))

    return operator


def test_nobody_answering_means_nothing_new_flies():
    _, sink, report = _run("new_target.json", _review())
    commits = _events(sink, "COMMIT_PLAN")
    assert [c.payload.get("trigger") for c in commits] == ["initial"]
    assert [r.status for r in report.replans] == ["review"]
    assert report.outcome.total_points == 64  # the plan in force, flown safely to the end


def test_a_late_accept_flies_the_approved_draft_rebased():
    _, sink, report = _run("new_target.json", _review(), _accept_after(30))
    commits = [c.payload for c in _events(sink, "COMMIT_PLAN")][1:]
    assert len(commits) == 1
    commit = commits[0]
    assert commit["approved"] == "operator" and commit["rebased_from"]  # 30 s > its cut
    assert commit["dropped"] == {}
    drafted = next(r for r in sink.of(PlanVersionRecord) if r.plan_id == commit["rebased_from"])
    assert drafted.status in ("draft", "rebased")
    assert unapproved_commits(sink.records) == []  # the same targets, minus those collected
    assert report.outcome.total_points == 74  # the new target was collected too
    assert report.replans[0].status == "committed" and report.replans[0].rebased == 1
    assert lost_to_known_sams(sink.records) == []


def test_an_accept_before_the_cut_flies_the_draft_as_it_is():
    # Paced (as fast as possible, a draft is shown at its cut): the draft is ready well
    # before its cut, and the operator accepts at once.
    accept = _accept_after(0.5)

    def operator(executive, result) -> None:
        accept(executive, result)
        if any(e["kind"] == "COMMIT_PLAN" and e.get("approved") for e in executive.events_seen):
            executive.stop()

    _, sink, _ = _run("new_target.json", _review(), operator, speed=50.0)
    commit = [c.payload for c in _events(sink, "COMMIT_PLAN")][1]
    assert commit["approved"] == "operator" and commit["rebased_from"] is None
    assert unapproved_commits(sink.records) == []


def test_a_rebase_that_drops_a_target_asks_again():
    """The operator approves a draft; before the ACCEPT, one of its targets is removed. The
    rebase cannot keep it: the result is a new draft for review, not a commit; a second
    ACCEPT flies it."""
    removed: list[str] = []
    accepts: list[int] = []
    draft_ticks: dict[str, int] = {}

    def operator(executive, result) -> None:
        tick = result.tick
        if tick == 200:
            executive.command(HumanCommand("REPLAN"))
        draft = executive.rounds.review
        if draft is not None and draft.plan_id not in draft_ticks:
            draft_ticks[draft.plan_id] = tick
            if not removed:  # the first draft: take one of its later targets away
                victim = next(ts[-1] for ts in draft.intent.values() if len(ts) >= 2)
                removed.append(victim)
                executive.edit(parse_edit({"op": "remove_target", "id": victim}))
            accepts.append(tick + 40 * HZ)
        while accepts and tick >= accepts[0]:
            accepts.pop(0)
            executive.command(HumanCommand("ACCEPT"))

    # only the operator triggers replans here, so the removal does not start a new round
    _, sink, _ = _run("demo.json", _review(triggers=("operator",)), operator)
    reviews = [r.payload for r in _events(sink, "REVIEW")]
    assert len(reviews) == 2, reviews
    assert reviews[1]["rebased_from"] == reviews[0]["plan_id"]
    assert reviews[1]["dropped"] == {removed[0]: "no longer a target"}
    commits = [c.payload for c in _events(sink, "COMMIT_PLAN")][1:]
    assert len(commits) == 1 and commits[0]["approved"] == "operator"
    assert (
        commits[0]["rebased_from"] == reviews[1]["plan_id"]
        or commits[0]["plan_id"] == reviews[1]["plan_id"]
    )
    assert unapproved_commits(sink.records) == []


def test_review_timeout_keeps_the_plan_in_force():
    _, sink, report = _run("new_target.json", _review(review_timeout_s=20.0))
    rejected = _events(sink, "PLAN_REJECTED")
    assert rejected and "no answer within 20 s" in rejected[0].payload["reason"]
    assert [c.payload.get("trigger") for c in _events(sink, "COMMIT_PLAN")] == ["initial"]
    assert report.replans[0].status == "expired"


def test_review_timeout_can_commit_the_draft_by_policy():
    _, sink, report = _run(
        "new_target.json", _review(review_timeout_s=20.0, review_timeout_action="commit")
    )
    assert _events(sink, "REVIEW_TIMEOUT")
    commits = [c.payload for c in _events(sink, "COMMIT_PLAN")][1:]
    assert len(commits) == 1 and commits[0]["approved"] == "policy"
    assert unapproved_commits(sink.records) == []
    assert report.outcome.total_points == 74


def test_the_review_panel_shows_the_draft_rebased_and_its_clock():
    seen: list[dict[str, Any]] = []

    def operator(executive, result) -> None:
        view = executive.review()
        if view is not None and view["rebased"] is not None and not seen:
            seen.append(view)
            executive.stop()

    sink = ListSink()
    executive = Executive(
        load_scenario(SCENARIOS / "new_target.json"),
        planner=AgentPlanner(make_engine("rules"), sink, iterations=400, use_agents=False),
        sink=sink,
        options=LoopOptions(policy=_review(review_preview_s=0.05)),
        publish=lambda topic, payload: None,  # someone watches: previews are made
    )
    executive.watch(publish=lambda topic, payload: None, on_tick=lambda r: operator(executive, r))
    asyncio.run(executive.run(500.0))
    assert seen, "no rebased preview was shown"
    view = seen[0]
    assert view["waited_s"] > 0 and view["rebased"]["cut_tick"] > view["cut_tick"]
    assert view["rebased"]["dropped"] == {}
    # the difference is over the remainder: the new target is added, nothing removed
    assert all(not r["removed"] for r in view["diff"]["routes"].values())
    assert any("T13" in r["added"] for r in view["diff"]["routes"].values())


def test_the_difference_never_counts_collected_targets_as_removed():
    plan = {"1": ("T1", "T2", "T3"), "2": ("T4", "T5")}
    draft = {"1": ("T3",), "2": ("T5", "T9")}
    priority = {"T1": 1, "T2": 2, "T3": 3, "T4": 4, "T5": 5, "T9": 9}
    diff = remainder_diff(plan, draft, priority, gone={"T1", "T2", "T4"})
    assert diff["routes"] == {
        "2": {"added": ["T9"], "removed": [], "old": ["T5"], "new": ["T5", "T9"]}
    }
    assert diff["points_in_force"] == 8 and diff["points_drafted"] == 17 and diff["points"] == 9
