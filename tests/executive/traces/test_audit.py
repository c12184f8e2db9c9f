"""The audits read a run's records: a loss inside a SAM known before it, a review commit
that flies what was not approved; and nothing else is called a failure."""

from __future__ import annotations

from executive.contracts import EventRecord, PlanVersionRecord
from executive.traces.audit import initial_sams, lost_to_known_sams, unapproved_commits


def _e(tick: int, kind: str, **payload) -> EventRecord:
    return EventRecord("run", tick, kind, payload)


def test_a_loss_counts_only_when_the_sam_was_known_before_it():
    added = {"op": "add_sam", "id": "S1"}
    records = [
        _e(10, "edit_applied", edit=added),
        _e(11, "drone_lost", drone="1", reason="sam", sam="S1"),  # known at 10: a failure
        _e(20, "edit_applied", edit={"op": "add_sam", "id": "S2", "hidden": True}),
        _e(30, "drone_lost", drone="2", reason="sam", sam="S2"),  # hidden, never detected
        _e(40, "sam_detected", sam="S3", drone="3"),
        _e(40, "drone_lost", drone="3", reason="sam", sam="S3"),  # the same tick: no time
        _e(50, "drone_lost", drone="4", reason="fuel"),
    ]
    assert lost_to_known_sams(records) == ["1"]


def _draft(plan_id: str, intent: dict) -> PlanVersionRecord:
    return PlanVersionRecord(
        "run", plan_id, None, 0, "draft", "t", {}, provenance={"intent": intent}
    )


def test_review_commits_must_fly_what_was_approved():
    records = [
        _draft("d1", {"1": ["T1", "T2", "T3"]}),
        _e(5, "target_collected", target="T1", drone="1"),
        # approved, rebased later: T1 was collected by the cut, the rest is the same
        _e(
            9,
            "COMMIT_PLAN",
            plan_id="c1",
            approved="operator",
            rebased_from="d1",
            cut_tick=8,
            intent={"1": ["T2", "T3"]},
        ),
        # approved, but flies fewer targets than approved: a failure
        _e(
            20,
            "COMMIT_PLAN",
            plan_id="c2",
            approved="operator",
            rebased_from="d1",
            cut_tick=19,
            intent={"1": ["T2"]},
        ),
        # not approved at all: a failure
        _e(30, "COMMIT_PLAN", plan_id="c3", approved="auto", intent={"1": []}),
        _e(0, "COMMIT_PLAN", plan_id="c0", trigger="initial"),  # the first plan
    ]
    problems = unapproved_commits(records)
    assert len(problems) == 2
    assert problems[0].startswith("c2: 1 flies ['T2'], approved ['T2', 'T3']")
    assert problems[1].startswith("c3: committed without approval (auto)")


def test_a_sam_on_the_map_from_the_start_is_known_before_the_first_tick():
    loss = EventRecord("r", 5, "drone_lost", {"drone": "2", "reason": "sam", "sam": "S1"})
    assert lost_to_known_sams([loss]) == []  # nothing said it was known...
    assert lost_to_known_sams([loss], ["S1"]) == ["2"]  # ...but it was on the map
    scenario = {"environment": {"sams": [{"id": "S1", "pos": [0, 0], "range": 1}]}}
    assert initial_sams(scenario) == ["S1"]


def test_a_sam_moved_onto_a_drone_is_known_where_it_went_only_from_the_move_on():
    moved = {"op": "move_sam", "id": "S1", "pos": [5.0, 5.0], "range": 4.0}
    records = [
        _e(100, "edit_applied", edit=moved),
        _e(100, "drone_lost", drone="1", reason="sam", sam="S1"),  # moved onto it: no time
        _e(101, "drone_lost", drone="2", reason="sam", sam="S1"),  # known there at 100
    ]
    assert lost_to_known_sams(records, ["S1"]) == ["2"]


def test_a_loss_recorded_before_the_move_that_caused_it_is_judged_the_same():
    # records are not written in tick order (harder-0043's loss comes after the executive's
    # records of the next tick): the verdict must not depend on the order they arrive in
    moved = {"op": "move_sam", "id": "S1", "pos": [5.0, 5.0], "range": 4.0}
    records = [
        _e(100, "drone_lost", drone="1", reason="sam", sam="S1"),
        _e(100, "edit_applied", edit=moved),
        _e(101, "drone_lost", drone="2", reason="sam", sam="S1"),
    ]
    assert lost_to_known_sams(records, ["S1"]) == ["2"]
    assert lost_to_known_sams(list(reversed(records)), ["S1"]) == ["2"]
