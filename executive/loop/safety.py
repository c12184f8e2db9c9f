"""Safety, a layer of its own that never waits for a plan.

Every ``policy.safety_every`` ticks (and at once when a SAM becomes known), for every
airborne drone, the layer checks its *current* flight against the *known* SAMs: the first
point of the flight closer to a SAM's centre than its radius plus half the planning margin
(``first_contact``, exact geometry, cached until the flight or the known world changes).
When that contact lies within what the drone flies before any new plan could take over (the
planning lookahead, two safety periods, and room to turn away), the layer acts at once, in
this order of preference:

1. **divert**: the same remaining waypoints, in the same order, to the same end, on
   SAM-avoiding paths, when the fuel covers it with the reserve (waypoints inside a SAM or
   unreachable are skipped and named);
2. **hold** on a circle through where the drone is, when that circle is clear of every
   known SAM;
3. **home**: the nearest airport it can reach with its fuel on SAM-avoiding paths (allowed
   ends first, any airport when those are unreachable);
4. otherwise it says that no safe option was found and flies the way round the known SAMs
   to the nearest airport, even if its fuel falls short (a hold there would meet a SAM);
   it holds only when no such way exists.

A holding drone whose circle a SAM now covers is moved the same way. Fuel: a drone whose
fuel no longer covers the way home plus the reserve (``Policy.reserve_km``) goes home, whatever the
plan says, holding drones included. Before that, a drone whose fuel no longer covers the
rest of its plan in force (its margin went negative: a pause, a hold, a leak) is said once
(``PLAN_INFEASIBLE``, with the margin) and a replan is asked for: the fix, committed in auto
and offered in review (held while paused; the loop replans at RESUME). After a failed replan, drones on unsafe flights are
diverted or sent home at once, and drones the layer held go home (nothing will re-task
them). Every action is a sim command recorded as an input (so it replays exactly) and an
event with its reason. This holds in every mode: auto, review waiting, paused, replan
running or failed, agents slow.
"""

from __future__ import annotations

import logging
import math
import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass
from functools import partial
from typing import Any, Protocol

import numpy as np

from executive.loop.contacts import Contacts, Known
from executive.loop.divert_ahead import DivertJobs, Route, divert_route
from executive.loop.homing import (
    AirportIndex,
    Found,
    HomeBounds,
    Nearest,
    StraightWays,
    choose,
    search,
    straight_ways,
)
from executive.loop.known_field import KnownField
from executive.loop.policy import Policy
from executive.loop.record import Recorder
from executive.loop.rounds import Rounds
from planner.geodesy import planning_disks
from planner.geometry import MARGIN_ABS, Path, SamField
from planner.geometry.contact import Disk, first_contact, may_meet, path_box
from planner.model import Airport, Scenario
from sim import Flight, FlyPath, Hold, Sim
from sim.commands import START_TOLERANCE
from sim.flight import hold_circle

__all__ = ["CONTACT_MARGIN", "Safety"]

# A flight closer than this to a known SAM's edge counts as entering it. Half the planning
# margin: plans keep a full margin away, so a plan never trips it, while a chord between
# two points outside it cannot reach the true disk (its sagitta is far smaller).
CONTACT_MARGIN = 0.5 * MARGIN_ABS
_TURN_KM = 0.5  # km of slack on top of the holding circle's diameter
# Paced: the diverts' geometry one check may spend on a tick (a divert round SAMs is ~11 ms
# at 500 SAMs on a slow day). Past it, drones with room wait for the next tick; one always acts.
_ACT_BUDGET_S = 0.010
# Paced: the ways home one fuel check may search for on a tick (each 0.5-1 ms at 500 SAMs).
# Past it, the drones left wait for the next ticks, at most a safety period: the margin a
# paced check keeps covers two periods of flight for that
_FUEL_BUDGET_S = 0.010


log = logging.getLogger(__name__)

_NOWHERE = "fuel: no airport within its fuel"  # a drone the fuel check can send nowhere


class SafetyHost(Protocol):
    """What the safety layer needs from the executive it guards."""

    scenario: Scenario
    policy: Policy
    recorder: Recorder
    rounds: Rounds
    paused: bool
    speed: float | None  # x real time; None: as fast as possible (nothing runs beside it)

    @property
    def sim(self) -> Sim:
        """The running simulation."""
        ...

    def reserve_for(self, drone_id: str, home: float | None = None) -> float:
        """Km of fuel the drone keeps above its way home (the policy's, the SAMs known, its
        leaks; with the way home's ``home`` km, what a further leak would take there)."""
        ...


@dataclass(frozen=True)
class _Contact:
    s: float  # arc length on the flight
    sam: str


class Safety:
    """Diverts, holds and returns that keep drones alive whatever the plan says."""

    def __init__(self, host: SafetyHost) -> None:
        self.host = host
        self.returning: dict[str, str] = {}  # drones sent home: not planned any more
        self.held: dict[str, str] = {}  # drones held by safety, waiting for a plan
        self.actions = 0  # how many times the layer acted
        self.infeasible: dict[str, float] = {}  # drone -> its negative margin, said once
        # drone -> the known SAM its plan in force meets beyond the horizon (said once per
        # SAM and flight), when the layer will act and how: a plan left unsafe (after a
        # REJECT, while a draft waits) is never silent
        self.warnings: dict[str, dict[str, Any]] = {}
        self._warned: dict[str, tuple[Flight, str]] = {}
        # drone -> (flight, known-world version, first contact or None)
        self._cache: dict[str, tuple[Flight, int, _Contact | None]] = {}
        # every known SAM's contact disk, for one known-world version: built once a version,
        # not once per drone (500 SAMs x 1,000 drones after a commit otherwise)
        self._all_disks: tuple[int, tuple[Disk, ...], list[str]] | None = None
        # (the version before, how many of its disks lead the current ones) when the known
        # world only grew: a pop-up SAM is then tested alone against each cached contact
        self._grown: tuple[int, int] | None = None
        # the known SAMs' field for the ways home and diverts, one per known-world version:
        # 55-68 ms at 500 SAMs, built in a worker when paced (``known_field``)
        self.field = KnownField(host.scenario.geo)
        # paced: a divert waits a tick or more for the field being built, or for the
        # tick's budget (``_waits``); the check runs every tick until it acts
        self.deferred = False
        # this tick's checks (a SAM known after the step checks, and the tick's own check
        # again): the tick, what they spent and whether they diverted. The budget is the
        # tick's, not each check's: a second check on one tick diverted the drones the first
        # left for the next ticks
        self._tick, self._spent, self._acted = -1, 0.0, False
        self._began = 0.0  # when this tick's checks would have begun, run back to back
        # drone -> the tick the layer last acted for it: several SAMs known on one tick each
        # check again, before the sim steps and the first command changes the flight
        self._acted_at: dict[str, int] = {}
        self._checked: tuple[int, int] | None = None  # (tick, known-world version) last checked
        # paced: diverts worked out in a worker from a checkpoint a few ticks on
        self.diverts = DivertJobs()
        # first contacts of paths about to fly, worked out in the planning worker threads
        self.contacts = Contacts()
        # drone -> (its flight's path, a box round it): a new SAM's quick test (``_may_meet``)
        self._boxes: dict[str, tuple[Path, tuple[float, float, float, float]]] = {}
        # (world, known-world version, SAM id -> SAM): the SAMs of one tick looked up, not
        # each found in a pass over every known SAM
        self._sam_index: tuple[object, int, dict[str, Any]] | None = None
        # (world, tick, the airborne drones, their flights' boxes (n, 4)): ``_near``
        self._box_array: tuple[object, int, list[str], np.ndarray] | None = None
        # drone -> (its path, whether that path ends at an airport): read every check
        self._ends: dict[str, tuple[Path, bool]] = {}
        self._held_ends: dict[str, tuple[Path, bool]] = {}  # of the flights holds left
        # (world, tick, the airborne drones then): statuses change only when the sim steps
        self._up: tuple[object, int, list[str]] | None = None
        # ways home a holding drone is sure of without a search (``homing``): the fuel
        # check of a paused swarm searches only for the drones a bound does not cover
        self.homes = HomeBounds()
        self._airports = AirportIndex()  # the known airports, for many drones at once
        # paced: drone -> the tick its way home was first due, for those a fuel check left
        # to the next ticks (its budget spent)
        self._fuel_due: dict[str, int] = {}
        self._allowed: dict[str, set[str]] = {}  # drone -> the ids of its allowed ends
        self._any_end: tuple[Sequence[Airport], set[str]] | None = None  # every airport's
        # (tick, known-world version, drones): those the known-SAM check found clear
        self._clear: tuple[int, int, set[str]] = (-1, -1, set())
        # the fleet's drone ids (their tuple, held) and each one's index, for ``_flight_fuel``
        self._drone_index: tuple[tuple[str, ...], dict[str, int]] | None = None

    # ----- what the loop calls -----------------------------------------------------------

    def check(self) -> None:
        """The periodic check: known SAMs ahead, then fuel: the plans' margins, then the way
        home. Paced, the known SAMs' field is built in a worker before any of them needs it
        (once per set of known SAMs): a paused swarm's first ways home do not wait for it."""
        if self.host.speed is not None:
            self.field.prefetch(self.host.sim.world)
        self._check_sams()
        self._check_margins()
        self._check_fuel()

    def plan_margin(self, drone_id: str) -> float | None:
        """Km of fuel left once the drone has flown the rest of its plan in force (its kept
        flight while it holds for a pause, from the nearest point of the way back onto it:
        a lower bound on what it needs); None when it flies no plan to an airport."""
        world = self.host.sim.world
        fuel = world.fuel(drone_id)
        flight = world.flight(drone_id)
        if flight is None:
            return None
        if not flight.holding:
            if not self._ends_at_airport(drone_id, flight):
                return None
            return fuel - (flight.length - world.progress(drone_id))
        kept = world.kept_span(drone_id)  # the plan the hold left, without building it
        if kept is None or not self._ends_at_airport(drone_id, kept[0], held=True):
            return None
        x, y, _ = world.position(drone_id)
        # from where the hold began (where its circle begins), the rest of that plan
        (sx, sy), km = flight.path.start, kept[0].length - kept[1]
        return fuel - (math.hypot(sx - x, sy - y) + km)

    def _check_margins(self) -> None:
        """Each drone whose plan in force no longer fits its fuel: said once, with the
        margin, and a replan asked for (not for drones already sent home)."""
        host = self.host
        drones = self._airborne()
        # a drone flying a flight that lands, with its margin (``plan_margin``'s sum, from
        # the fleet's arrays at once) not short, is passed over; the others as before
        fuel, left, lands = self._flight_fuel(drones)
        short = ~(lands & (fuel - left >= -1e-9))
        for n in np.flatnonzero(short).tolist():
            drone_id = drones[n]
            if drone_id in self.returning or drone_id in self.infeasible:
                continue
            margin = self.plan_margin(drone_id)
            if margin is None or margin >= -1e-9:
                continue
            self.infeasible[drone_id] = margin
            host.recorder.event(
                host.sim.tick,
                "PLAN_INFEASIBLE",
                {
                    "drone": drone_id,
                    "margin": round(margin, 3),
                    "fuel": round(host.sim.world.fuel(drone_id), 3),
                    "paused": host.paused,
                    "fix": "a replan at RESUME" if host.paused else "a replan now",
                },
            )
            if not host.paused:
                host.rounds.trigger("fuel", f"fuel:{drone_id} plan needs {-margin:.1f} km more")

    def sam_known(self, sam_id: str, trigger: str) -> None:
        """A SAM became known: act at once for drones it threatens; ask for a replan if it
        touches any planned path (or target on one)."""
        host = self.host
        sim = host.sim
        disks = self._some_disks(sam_id)[0]
        touched = [d for d in self._near(disks) if self._contact(d, sam_only=sam_id) is not None]
        self.sams_changed()
        world = sim.world
        if self._checked != (world.tick, world.environment_version):
            self._check_sams()  # once a tick for the world known now: the SAMs of a tick at once
        if not touched:
            host.rounds.changed()
            host.recorder.event(
                sim.tick, "CONTINUE", {"change": trigger, "reason": "touches no planned path"}
            )
            return
        host.rounds.trigger("sam", trigger)

    def sams_changed(self) -> None:
        """The known SAMs changed (one known, moved or removed): paced, their field starts
        building in a worker now, whether or not the change touches a flight. A divert or a
        fuel check's way home asks for it; built on the tick it stalled the tick (55-68 ms
        at 500 SAMs)."""
        if self.host.speed is not None:
            self.field.prefetch(self.host.sim.world)

    def _near(self, disks: Sequence[Disk]) -> list[str]:
        """The airborne drones whose flight's box comes near ``disks``: one array test a
        disk over every flight's box (the array kept for the tick: flights change only when
        the sim steps). 20 SAMs popping up among 100 drones were 2,000 box tests in Python."""
        world = self.host.sim.world
        kept = self._box_array
        if kept is None or kept[0] is not world or kept[1] != world.tick:
            drones = self._airborne()
            boxes = np.empty((len(drones), 4))
            for k, drone_id in enumerate(drones):
                box = self._box(drone_id)
                boxes[k] = (math.inf, -math.inf, math.inf, -math.inf) if box is None else box
            kept = self._box_array = (world, world.tick, drones, boxes)
        drones, b = kept[2], kept[3]
        near = np.zeros(len(drones), dtype=bool)
        for cx, cy, r in disks:
            near |= (
                (cx - r < b[:, 1]) & (cx + r > b[:, 0]) & (cy - r < b[:, 3]) & (cy + r > b[:, 2])
            )
        return [drones[k] for k in np.flatnonzero(near)]

    def _box(self, drone_id: str) -> tuple[float, float, float, float] | None:
        """A box round the drone's flight (kept per flight path); None: no flight."""
        flight = self.host.sim.world.flight(drone_id)
        if flight is None:
            return None
        kept = self._boxes.get(drone_id)
        if kept is None or kept[0] is not flight.path:
            box = self.contacts.box(flight.path) or path_box(flight.path)  # worked out ahead
            kept = self._boxes[drone_id] = (flight.path, box)
        return kept[1]

    def _may_meet(self, drone_id: str, disks: Sequence[Disk]) -> bool:
        """Whether the drone's flight comes near ``disks`` at all (its box, kept per flight):
        a SAM popping up is tested exactly only against the flights near it (1,000 drones'
        exact tests were 0.1 ms each, on the tick)."""
        box = self._box(drone_id)
        return box is not None and may_meet(box, disks)

    def lost(self, drone_id: str) -> None:
        """A lost drone is nobody's to send home or hold."""
        self.warnings.pop(drone_id, None)
        self.returning.pop(drone_id, None)
        self.held.pop(drone_id, None)
        self._cache.pop(drone_id, None)
        self.diverts.jobs.pop(drone_id, None)

    def planned(self, drones: set[str]) -> None:
        """A committed plan re-tasks these drones: they are no longer held, and their new
        plan's margin is watched afresh."""
        for drone_id in drones:
            self.held.pop(drone_id, None)
            self.infeasible.pop(drone_id, None)

    def after_failure(self, reason: str) -> None:
        """No new plan is coming: nothing unsafe may keep flying, and nothing the layer held
        may wait for a plan any longer."""
        sim = self.host.sim
        world = sim.world
        acted: dict[str, str] = {}
        for drone_id in self._airborne():
            if drone_id in self.returning:
                continue
            flight = world.flight(drone_id)
            contact = self._contact(drone_id)
            if contact is not None:
                acted[drone_id] = self._act(drone_id, contact.sam, "replan failed", divert=True)
            elif drone_id in self.held and flight is not None and flight.holding:
                acted[drone_id] = self._home(drone_id, "held, and the replan failed")
        if acted:
            self.host.recorder.event(
                sim.tick, "SAFETY_FALLBACK", {"reason": reason, "actions": acted}
            )

    def send_home(self, drone_id: str, reason: str) -> str:
        """The operator's RETURN: fly to the nearest airport reachable with the fuel on a
        SAM-avoiding path (allowed ends first), as a safety return; no plan re-tasks it.
        What was done (``"home to A2"``), or "" when no airport is within its fuel (then it
        holds if it safely can, and a NO_SAFE_OPTION event says why)."""
        return self._home(drone_id, reason)

    def hold_here(self, drone_id: str, reason: str) -> str | None:
        """The operator's HOLD: circle where the drone is, when that circle is clear of every
        known SAM (a HOLD event says where); why not otherwise. Not a safety hold: a failed
        replan does not send it home, and the periodic check still moves it off a circle a
        SAM comes to cover."""
        world = self.host.sim.world
        if world.status(drone_id) != "flying":
            return f"it is {world.status(drone_id)}, not flying"
        if not self._safe(self._hold_circle(drone_id)):
            return "its holding circle here would meet a known SAM"
        self._submit_hold(drone_id)
        x, y, _ = world.position(drone_id)
        self.host.recorder.event(
            self.host.sim.tick, "HOLD", {"drone": drone_id, "reason": reason, "at": [x, y]}
        )
        return None

    def fallback(self, drone_id: str, reason: str) -> None:
        """A drone the planner could not plan: home if it can, else hold."""
        if drone_id in self.returning or drone_id not in self._airborne():
            return
        self._home(drone_id, reason)

    # ----- known SAMs ------------------------------------------------------------------

    def _flight_fuel(self, drones: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """``World.flight_fuel`` for ``drones``, in their order: fuel, the flight left, and
        whether the flight lands (the sim's end airport is this layer's: the same airports,
        all known, and tolerance, ``AT_KM``)."""
        world = self.host.sim.world
        index = self._drone_index
        if index is None or index[0] is not world.drone_ids:
            index = self._drone_index = (
                world.drone_ids,
                {d: i for i, d in enumerate(world.drone_ids)},
            )
        at = np.array([index[1][d] for d in drones], dtype=np.int64)
        fuel, left, lands = world.flight_fuel()
        return fuel[at], left[at], lands[at]

    def _airborne(self) -> list[str]:
        world = self.host.sim.world
        up = self._up
        if up is not None and up[0] is world and up[1] == world.tick:
            return list(up[2])  # the check asks three times a tick: 1,000 statuses each
        drones = [
            d for d in self.host.scenario.drone_configs if world.status(d) in ("flying", "holding")
        ]
        self._up = (world, world.tick, drones)
        return list(drones)

    def _disks(self, sam_only: str | None = None) -> tuple[tuple[Disk, ...], list[str]]:
        world = self.host.sim.world
        if sam_only is None:
            version = world.environment_version
            known = self._all_disks
            if known is None or known[0] != version:
                disks, ids = self._some_disks(None)
                # the SAMs known before, all still there in the same order, and new ones
                # after them: a flight's contact with them needs only the new ones tested
                self._grown = None
                if known is not None:
                    n = len(known[1])
                    if disks[:n] == known[1] and ids[:n] == known[2]:
                        self._grown = (known[0], n)
                known = self._all_disks = (version, disks, ids)
            return known[1], known[2]
        return self._some_disks(sam_only)

    def ahead(self) -> Callable[[Iterable[Path]], None]:
        """What a worker thread calls with the paths a plan will fly: their first contacts
        with the SAMs known now (taken here, on the tick), for the first check after the
        commit to take (``executive.loop.contacts``)."""
        disks, ids = self._disks()
        known = Known(self.host.sim.world.environment_version, disks, tuple(ids))
        return partial(self.contacts.work_out, known)

    def _some_disks(self, sam_only: str | None) -> tuple[tuple[Disk, ...], list[str]]:
        world = self.host.sim.world
        if sam_only is None:
            chosen = list(world.known_environment.sams)
        else:
            index = self._sam_index
            if index is None or index[0] is not world or index[1] != world.environment_version:
                sams = {s.id: s for s in world.known_environment.sams}
                index = self._sam_index = (world, world.environment_version, sams)
            one = index[2].get(sam_only)
            chosen = [] if one is None else [one]
        # a geographic mission's SAMs as the planner treats them: their geodesic covers
        covers = planning_disks(chosen, self.host.scenario.geo)
        # a tuple: first_contact keeps its boxes for the check's every drone
        return tuple((x, y, r + CONTACT_MARGIN) for x, y, r in covers), [s.id for s in chosen]

    def _contact(self, drone_id: str, *, sam_only: str | None = None) -> _Contact | None:
        """The first contact of the drone's current flight, from where it is now."""
        world = self.host.sim.world
        flight = world.flight(drone_id)
        if flight is None:
            return None
        version = world.environment_version
        cached = self._cache.get(drone_id)
        if sam_only is None and cached is not None and cached[0] is flight and cached[1] == version:
            contact = cached[2]
        else:
            # worked out off the tick for a path a plan put in the air (``contacts``)
            ready, known = (False, None) if sam_only else self.contacts.take(flight.path, version)
            if ready:
                contact = None if known is None else _Contact(*known)
            else:
                disks, ids = self._disks(sam_only)
                grown = self._grown if sam_only is None else None
                if (
                    grown is not None
                    and cached is not None
                    and cached[0] is flight
                    and cached[1] == grown[0]
                ):
                    # the known world only grew since: the earlier of the contact with the
                    # SAMs known before and the first with the new ones (ties to the former,
                    # as ``first_contact`` gives them to the first disk)
                    contact = cached[2]
                    added = disks[grown[1] :]
                    found = (
                        first_contact(flight.path, added)
                        if self._may_meet(drone_id, added)
                        else None
                    )
                    if found is not None and (contact is None or found[0] < contact.s):
                        contact = _Contact(found[0], ids[grown[1] + found[1]])
                else:
                    # A holding circle is flown again and again: all of it counts.
                    found = first_contact(flight.path, disks)
                    contact = None if found is None else _Contact(found[0], ids[found[1]])
            if sam_only is None:
                self._cache[drone_id] = (flight, version, contact)
        if contact is None or flight.holding:
            return contact
        s_now = world.progress(drone_id)
        if contact.s >= s_now:
            return contact
        # The first contact is behind: look again from here on.
        disks, ids = self._disks(sam_only)
        found = first_contact(flight.path, disks, start=s_now)
        return None if found is None else _Contact(found[0], ids[found[1]])

    def horizon_km(self, drone_id: str) -> float:
        """How far ahead a contact needs action now: what the drone flies before a new
        plan could take over (the lookahead and two safety periods), and room to turn."""
        host = self.host
        world = host.sim.world
        step = world.config.speed_of(drone_id) * world.dt
        ticks = host.rounds.lookahead() + 2 * host.policy.safety_every + 2
        return ticks * step + 2.0 * world.config.hold_radius + _TURN_KM

    @property
    def waiting(self) -> bool:
        """Paced, checks left to the next tick: a divert waiting for the field or the
        tick's budget, ways home past the fuel check's budget."""
        return self.deferred or bool(self._fuel_due)

    def recheck(self) -> None:
        """Between the periodic checks, while checks wait (``waiting``): the known SAMs
        again (acting as soon as the field is built, or the drone's room runs out), and the
        ways home a fuel check left."""
        if self.deferred:
            self._check_sams()
        if self._fuel_due:
            self._check_fuel(list(self._fuel_due))

    def _check_sams(self) -> None:
        world = self.host.sim.world
        self._checked = (world.tick, world.environment_version)
        self.deferred = False
        if self._tick != world.tick:
            self._tick, self._spent, self._acted = world.tick, 0.0, False
        self._began = time.perf_counter() - self._spent  # the tick's earlier checks count
        clear: set[str] = set()  # no known SAM ahead of them: the fuel check reads it
        self._clear = (world.tick, world.environment_version, clear)
        for drone_id in self._airborne():
            if self._acted_at.get(drone_id) == world.tick:
                continue  # its command takes effect when the sim steps: not twice
            contact = self._contact(drone_id)
            if contact is None:
                clear.add(drone_id)
                self.warnings.pop(drone_id, None)
                continue
            flight = world.flight(drone_id)
            if flight is not None and flight.holding:
                self.warnings.pop(drone_id, None)
                self._act(drone_id, contact.sam, "its holding circle", divert=False)
            elif contact.s - world.progress(drone_id) <= self.horizon_km(drone_id):
                self.warnings.pop(drone_id, None)
                if flight is not None and self._divert_ahead(drone_id, flight, contact):
                    continue
                if self._waits(drone_id, contact):
                    continue
                self._act(drone_id, contact.sam, "its flight ahead", divert=True)
                self._acted = True
            elif flight is not None:
                self._warn(drone_id, flight, contact)
        for job in [j for j in self.diverts.jobs.values() if j.tick <= world.tick]:
            del self.diverts.jobs[job.drone]  # its drone needs it no more (or acted on the tick)
            self.diverts.dropped += 1
        self._spent = time.perf_counter() - self._began

    def _divert_ahead(self, drone_id: str, flight: Flight, contact: _Contact) -> bool:
        """Paced, a divert worked out in a worker (``divert_ahead``): sent on its
        checkpoint's tick if the drone is still on the flight the job started from and the
        known SAMs are the same; True while the job works (the check runs every tick
        until then). A drone with room for a job gets one; False: act on the tick."""
        host = self.host
        if host.speed is None:
            return False
        world = host.sim.world
        job = self.diverts.jobs.get(drone_id)
        if job is not None:
            if job.flight is flight and job.tick > world.tick:
                self.deferred = True
                return True
            del self.diverts.jobs[drone_id]
            usable = job.flight is flight and job.tick == world.tick and job.future.done()
            failed = job.future.exception() if job.future.done() else None
            if failed is not None:  # said and counted; on the tick the same work raises again
                self.diverts.failed += 1
                log.warning(
                    "drone %s: its divert worked out in a worker failed: %r", drone_id, failed
                )
            route = None
            if usable and failed is None and job.disks == self._disks()[0]:
                route = job.future.result()
            here = world.position(drone_id)
            if route is None or math.dist(route.path.start, here[:2]) > START_TOLERANCE:
                self.diverts.dropped += 1
                return False
            self._acted_for(drone_id)
            self._send_divert(drone_id, job.sam, "its flight ahead meets " + job.sam, route)
            self.diverts.sent += 1
            self._acted = True
            return True
        step = world.config.speed_of(drone_id) * world.dt
        ticks = math.ceil(self.diverts.lead_s() * host.sim.tick_hz * host.speed) + 1
        s_now = world.progress(drone_id)
        if contact.s - self._must_km(drone_id) - s_now < ticks * step:
            return False  # no room to fly on while a worker works it out
        cut = world.tick + ticks
        x, y, _, s = world.checkpoint(drone_id, cut)
        stops, skipped = self._stops(flight, s)
        disks = self._disks()[0]
        end = flight.path.end
        work = partial(
            divert_route,
            here=(x, y),
            stops=stops,
            end=(float(end[0]), float(end[1])),
            disks=disks,
            fuel=world.fuel(drone_id) - (s - s_now),
            reserve=host.reserve_for(drone_id),
            skipped=skipped,
        )
        self.diverts.start(
            drone_id, flight, (cut, s), contact.sam, disks, self.field.later(world), work
        )
        self.deferred = True
        # a round started before the divert would be superseded by it: it starts after it
        rounds = host.rounds
        rounds.start_after = max(rounds.start_after, cut + 1)
        return True

    def _must_km(self, drone_id: str) -> float:
        """What a drone must have before its contact when the layer acts: two ticks of
        flight, a holding circle and the turn away."""
        world = self.host.sim.world
        step = world.config.speed_of(drone_id) * world.dt
        return 2.0 * world.config.hold_radius + _TURN_KM + 2.0 * step

    def _waits(self, drone_id: str, contact: _Contact) -> bool:
        """Paced, a drone with room to spare waits for a later tick instead of this tick
        waiting for its divert's geometry: while the known SAMs' field is built in a worker,
        and once this check has spent ``_ACT_BUDGET_S`` on other drones' diverts. Room is
        what it flies beyond two ticks, a holding circle and the turn before the contact
        (the horizon it acts within holds the planning lookahead and two safety periods
        more). The check then runs every tick until it acts; out of room it acts, waiting
        for the rest of the build. The round a change asks for starts after the act, as it
        does when the layer acts at once."""
        host = self.host
        world = host.sim.world
        if host.speed is None:
            return False
        ready = self.field.ready(world)
        if ready and (not self._acted or time.perf_counter() - self._began < _ACT_BUDGET_S):
            return False
        if contact.s - world.progress(drone_id) <= self._must_km(drone_id):
            return False
        if not ready:
            self.field.prefetch(world)
        self.deferred = True
        # a round started now would be superseded by the divert: it starts after it
        rounds = host.rounds
        rounds.start_after = max(rounds.start_after, host.sim.tick + 2)
        return True

    def _warn(self, drone_id: str, flight: Flight, contact: _Contact) -> None:
        """The plan in force meets a known SAM further ahead than the layer acts: say when
        it would enter and when the layer will act (unless a plan takes over first), as
        mission ticks (``enters_tick``, ``acts_tick``: a view counts down to them from the
        tick it shows) and as seconds from now (``in_s``, ``acts_in_s``, derived)."""
        host = self.host
        sim = host.sim
        world = sim.world
        step = world.config.speed_of(drone_id) * world.dt  # km flown a tick
        ahead = contact.s - world.progress(drone_id)
        enters = sim.tick + round(ahead / step)
        acts = sim.tick + round(max(0.0, ahead - self.horizon_km(drone_id)) / step)
        warning = {
            "drone": drone_id,
            "sam": contact.sam,
            "enters_tick": enters,
            "acts_tick": acts,
            "in_s": round((enters - sim.tick) / sim.tick_hz, 1),
            "acts_in_s": round((acts - sim.tick) / sim.tick_hz, 1),
            "action": f"divert around {contact.sam}, else hold, else home",
        }
        self.warnings[drone_id] = warning
        if self._warned.get(drone_id) == (flight, contact.sam):
            return
        self._warned[drone_id] = (flight, contact.sam)
        host.recorder.event(host.sim.tick, "PLAN_UNSAFE", warning)

    def _act(self, drone_id: str, sam_id: str, where: str, *, divert: bool) -> str:
        """Take the first safe option for a drone whose flight meets ``sam_id``."""
        self.diverts.jobs.pop(drone_id, None)
        reason = f"{where} meets {sam_id}"
        done = (divert and self._divert(drone_id, sam_id, reason)) or ""
        if not done and drone_id in self.returning:
            # on its way home already (no plan will re-task it): a new way home, round the
            # SAM and spending the reserve if it must; a hold would last until it ran dry
            done = self._home(drone_id, self.returning[drone_id], quiet_failure=True)
        if not done:
            done = self._hold(drone_id, sam_id, reason)
        if not done:
            done = self._home(drone_id, reason, quiet_failure=True)
        if not done:
            tick = self.host.sim.tick
            # Out of options: a hold here would fly into a known SAM (its circle meets one,
            # as in the notch two SAMs make). The way round the SAMs to the nearest airport,
            # even past the fuel: a drone that must run dry does so clear of every known SAM.
            route = self._way_home(drone_id, within_fuel=False)
            if route is not None and self._safe(route[1]):
                done = f"short of fuel, {self._home(drone_id, reason, route=route)}"
            else:
                self._submit_hold(drone_id)
                done = "hold (no safe option)"
            self.host.recorder.event(
                tick,
                "NO_SAFE_OPTION",
                {"drone": drone_id, "sam": sam_id, "reason": reason, "action": done},
            )
        self._acted_for(drone_id)
        return done

    def _acted_for(self, drone_id: str) -> None:
        """The layer acted for the drone this tick: counted, and the round in flight, which
        assumed the drone's old flight, must not be used."""
        self._acted_at[drone_id] = self.host.sim.tick
        self.actions += 1
        self.host.rounds.changed()
        self.host.rounds.start_after = max(self.host.rounds.start_after, self.host.sim.tick + 1)

    # ----- the options -------------------------------------------------------------------

    def _field(self) -> SamField:
        return self.field.get(self.host.sim.world)

    def _safe(self, path: Path) -> bool:
        return first_contact(path, self._disks()[0]) is None

    def _divert(self, drone_id: str, sam_id: str, reason: str) -> str:
        """The same remaining waypoints, in order, to the same end, around the known SAMs."""
        host = self.host
        world = host.sim.world
        flight = world.flight(drone_id)
        if flight is None or flight.holding:
            return ""
        x, y, _ = world.position(drone_id)
        stops, skipped = self._stops(flight, world.progress(drone_id))
        end = flight.path.end
        route = divert_route(
            self._field(),
            (x, y),
            stops,
            (float(end[0]), float(end[1])),
            self._disks()[0],
            world.fuel(drone_id),
            host.reserve_for(drone_id),
            skipped,
        )
        if route is None:
            return ""
        self._send_divert(drone_id, sam_id, reason, route)
        return "divert"

    def _stops(
        self, flight: Flight, s: float
    ) -> tuple[list[tuple[str, tuple[float, float]]], dict[str, str]]:
        """The flight's waypoints beyond ``s`` and where their targets are; those that are
        targets no more, named."""
        targets = {t.id: t for t in self.host.sim.world.known_environment.targets}
        stops: list[tuple[str, tuple[float, float]]] = []
        skipped: dict[str, str] = {}
        for target_id, _s in flight.remaining_waypoints(s):
            target = targets.get(target_id)
            if target is None:
                skipped[target_id] = "no longer a target"
            else:
                stops.append((target_id, (target.x, target.y)))
        return stops, skipped

    def _send_divert(self, drone_id: str, sam_id: str, reason: str, route: Route) -> None:
        host = self.host
        tick = host.sim.tick
        host.recorder.submit(
            FlyPath(drone=drone_id, path=route.path, waypoints=route.waypoints, tick=tick),
            "executive",
        )
        host.recorder.event(
            tick,
            "SAFETY_DIVERT",
            {
                "drone": drone_id,
                "sam": sam_id,
                "reason": reason,
                "km": round(route.path.length, 3),
                "fuel": host.sim.world.fuel(drone_id),
                "targets": [w[0] for w in route.waypoints],
                "skipped": route.skipped,
            },
        )

    def _hold_circle(self, drone_id: str) -> Path:
        """The circle the sim will fly for a hold here (its own choice of side)."""
        world = self.host.sim.world
        x, y, heading = world.position(drone_id)
        radius = float(world.config.hold_radius)
        sams = world.known_environment.sams
        best: tuple[float, Path] | None = None
        for left in (True, False):
            circle = hold_circle(x, y, heading, radius, left)
            cx, cy = circle.pieces[0].center  # type: ignore[union-attr]  # one Arc
            clearance = min(
                (math.hypot(cx - s.x, cy - s.y) - radius - s.range for s in sams),
                default=math.inf,
            )
            if best is None or clearance > best[0]:
                best = (clearance, circle)
        assert best is not None
        return best[1]

    def _hold(self, drone_id: str, sam_id: str, reason: str) -> str:
        """Hold where the drone is, if that circle is clear of every known SAM."""
        world = self.host.sim.world
        if world.status(drone_id) != "flying" or not self._safe(self._hold_circle(drone_id)):
            return ""
        self._submit_hold(drone_id)
        self.held[drone_id] = reason
        x, y, _ = world.position(drone_id)
        self.host.recorder.event(
            self.host.sim.tick,
            "SAFETY_HOLD",
            {"drone": drone_id, "sam": sam_id, "reason": reason, "at": [x, y]},
        )
        return "hold"

    def _submit_hold(self, drone_id: str) -> None:
        if self.host.sim.world.status(drone_id) == "flying":
            self.host.recorder.submit(Hold(drone=drone_id, tick=self.host.sim.tick), "executive")

    def _home(
        self,
        drone_id: str,
        reason: str,
        *,
        quiet_failure: bool = False,
        route: tuple[Airport, Path] | None = None,
    ) -> str:
        """Fly to the nearest airport reachable with the fuel (allowed ends first)."""
        host = self.host
        world = host.sim.world
        route = route or self._way_home(drone_id)
        if route is None:
            if not quiet_failure:
                if world.status(drone_id) == "flying" and self._safe(self._hold_circle(drone_id)):
                    self._submit_hold(drone_id)
                host.recorder.event(
                    host.sim.tick,
                    "NO_SAFE_OPTION",
                    {"drone": drone_id, "reason": f"{reason}; no airport within its fuel"},
                )
            return ""
        airport, path = route
        host.recorder.submit(FlyPath(drone=drone_id, path=path, tick=host.sim.tick), "executive")
        self.returning[drone_id] = reason
        self.held.pop(drone_id, None)
        host.recorder.event(
            host.sim.tick,
            "SAFETY_RETURN",
            {
                "drone": drone_id,
                "airport": airport.id,
                "reason": reason,
                "km": round(path.length, 3),
                "fuel": world.fuel(drone_id),
            },
        )
        host.rounds.trigger("drone_lost", f"safety_return:{drone_id}")
        return f"home to {airport.id}"

    def _way_home(self, drone_id: str, *, within_fuel: bool = True) -> tuple[Airport, Path] | None:
        """The nearest airport within the fuel on a SAM-avoiding path: those the fuel reaches
        with the reserve first (a way home that spends the reserve is one more SAM from
        failing), then the drone's allowed ends. ``within_fuel`` False: the nearest by the
        way round the SAMs whatever the fuel (a last resort). One search (``homing``)."""
        return self._search_home(drone_id, within_fuel=within_fuel)[1]

    def _search_home(
        self, drone_id: str, *, within_fuel: bool = True
    ) -> tuple[Found, tuple[Airport, Path] | None]:
        """``_way_home``, with the distances its search found."""
        world = self.host.sim.world
        airports = world.known_environment.airports
        x, y, _ = world.position(drone_id)
        fuel = world.fuel(drone_id)
        field = self._field()
        found = search(field, (x, y), fuel, airports, within_fuel=within_fuel)
        reserve_for = partial(self.host.reserve_for, drone_id)
        allowed = self._allowed_ends(drone_id)
        return found, choose(
            field, found, fuel, airports, allowed, reserve_for, within_fuel=within_fuel
        )

    def _allowed_ends(self, drone_id: str) -> set[str]:
        allowed = self._allowed.get(drone_id)
        if allowed is None:  # airports never change
            airports = self.host.sim.world.known_environment.airports
            ids = list(self._airports.ids(airports))
            options = self.host.scenario.drone_configs[drone_id].end_options(ids)
            # drones that may end anywhere share one set: built per drone, 784 drones x
            # 1,000 airports took 60 ms of one fuel check's tick
            if options == ids:
                if self._any_end is None or self._any_end[0] is not airports:
                    self._any_end = (airports, set(ids))
                allowed = self._any_end[1]
            else:
                allowed = set(options)
            self._allowed[drone_id] = allowed
        return allowed

    def _surely_home(
        self, drone_id: str, flight: Flight, fuel: float, period: float, *, look: bool = True
    ) -> bool:
        """True only if the exact way home of a drone holding on ``flight`` fits its fuel
        with the reserve and ``period``, known without a search (``homing.HomeBounds``):
        from its last search on this circle, and from the rest of the plan the hold left
        when that plan ends at an airport on a way the known SAMs' field allows (looked at
        once per hold, when ``look``: 0.1-0.3 ms at 500 SAMs)."""
        world = self.host.sim.world
        if self.host.speed is not None and not self.field.ready(world):
            return False  # searched once the field is built (in a worker)
        field = self._field()
        homes = self.homes
        if look and not homes.has_plan(drone_id, flight, field):
            left = world.kept_path(drone_id)  # once per hold
            if left is not None:
                homes.keep_plan(drone_id, flight, field, left, self._airport_at(left.end))
        x, y, _ = world.position(drone_id)
        return homes.fits(
            drone_id,
            flight,
            field,
            (x, y),
            fuel,
            world.known_environment.airports,
            self._allowed_ends(drone_id),
            partial(self.host.reserve_for, drone_id),
            period,
            self._airports,
        )

    # ----- fuel --------------------------------------------------------------------------

    def _check_fuel(self, only: list[str] | None = None) -> None:
        """A drone whose fuel no longer covers its way to an airport plus the reserve goes
        home now, whatever the plan says (holding drones too). ``only``: those drones (the
        ones an earlier check left past its budget)."""
        host = self.host
        world = host.sim.world
        began = time.perf_counter()
        # paced, a way home may wait a period past its check (the budget): the margin
        # covers the flight until the check after that one
        paced = host.speed is not None
        periods = 2.0 if paced else 1.0
        every = host.policy.safety_every
        # the ways home left by earlier checks are spread over the ticks before the oldest
        # is due: at least this many searched now, whatever the budget
        oldest = min(self._fuel_due.values(), default=world.tick)
        quota = math.ceil(len(self._fuel_due) / max(1, every - (world.tick - oldest)))
        searched = 0
        drones = self._airborne()
        if only is not None:
            wanted = set(only)
            drones = [d for d in drones if d in wanted]
            for gone in wanted - set(drones):
                self._fuel_due.pop(gone, None)
        env = world.known_environment
        # asked once a drone is past the skips, for it and those after it: (its index in
        # ``drones``, their nearest airports); their straight ways home once one is near
        # critical (and the field is built)
        near: tuple[int, Nearest] | None = None
        straight: StraightWays | None = None
        # the fleet's arrays at once: a drone flying a flight that lands with its fuel
        # covering the rest of it and the reserve (the sum below, in the same order) needs
        # no accessor read; only its contact, cached per flight
        fuels, left, lands = self._flight_fuel(drones)
        reserves = np.array([host.reserve_for(d) for d in drones], dtype=np.float64)
        fits = (lands & (fuels >= left + reserves - 1e-9)).tolist()
        # the drones this tick's known-SAM check found clear (their flights cannot change
        # before the sim steps); the others are asked
        seen = self._clear
        clear = seen[2] if seen[:2] == (world.tick, world.environment_version) else set()
        for i, drone_id in enumerate(drones):
            due = self._fuel_due.pop(drone_id, None)
            going = self.returning.get(drone_id)
            if going is None and fits[i] and (drone_id in clear or self._contact(drone_id) is None):
                # its flight (validated when committed) still fits its fuel with the reserve
                # a replan would keep: as the test below, from the arrays
                continue
            flight = world.flight(drone_id)
            if going is not None and (going == _NOWHERE or flight is None or not flight.holding):
                continue  # on its validated way home (a held one is checked: it must go on)
            reserve = host.reserve_for(drone_id)
            fuel = world.fuel(drone_id)
            if (
                flight is not None
                and not flight.holding
                and self._ends_at_airport(drone_id, flight)
                and fuel >= flight.length - world.progress(drone_id) + reserve - 1e-9
                and self._contact(drone_id) is None
            ):
                # its flight (validated when committed) still fits its fuel with the reserve
                # a replan would keep (so flying on keeps the promise a replan keeps); one
                # that meets a known SAM is not trusted: the way round may not fit, so the
                # drone turns home while a safe way still does (else it flies on, holds at
                # the SAM and runs dry there)
                continue
            if near is None:
                # for this drone and those after it at once (a flying swarm whose flights
                # all fit never asks)
                at = np.array([world.position(d)[:2] for d in drones[i:]], dtype=np.float64)
                near = (i, self._airports.nearest(env.airports, at.reshape(-1, 2)))
            row = i - near[0]
            nearest = near[1].km_to_nearest(row)
            if nearest + host.reserve_for(drone_id, nearest) < fuel * 0.5:
                continue  # far from critical: skip the exact paths
            if straight is None and (not paced or self.field.ready(world)):
                straight = straight_ways(self._field(), env.airports, self._airports, near[1])
            # until the next check the drone burns a period's fuel and may fly a period
            # further from home: turn now if the way home would not fit with the reserve then
            period = 2.0 * world.config.speed_of(drone_id) * world.dt * every * periods
            if straight is not None and straight.fits(
                row,
                fuel,
                self._allowed_ends(drone_id),
                partial(host.reserve_for, drone_id),
                period,
            ):
                self.homes.straight += 1  # a clear straight way home fits: no search
                continue
            if (
                flight is not None
                and flight.holding
                and self._surely_home(
                    drone_id,
                    flight,
                    fuel,
                    period,
                    look=not paced or time.perf_counter() - began <= _FUEL_BUDGET_S,
                )
            ):
                self.homes.bounded += 1  # the exact check would pass: no search
                continue
            first = world.tick if due is None else due
            if paced and not self.field.ready(world):
                self.field.prefetch(world)  # the field is built beside the ticks, not on one
            spent = not self.field.ready(world) or (
                time.perf_counter() - began > _FUEL_BUDGET_S and searched >= quota
            )
            if paced and spent and world.tick - first < every:
                self._fuel_due[drone_id] = first  # the next tick's (its margin covers it)
                self.homes.waited += 1
                continue
            found, route = self._search_home(drone_id)
            searched += 1
            self.homes.searched += 1
            if flight is not None and flight.holding:
                self.homes.keep_search(drone_id, flight, self._field(), found)
            if route is not None:
                reserve = host.reserve_for(drone_id, route[1].length)
            if route is not None and fuel >= route[1].length + reserve + period:
                continue
            tick = host.sim.tick
            self.actions += 1  # the fuel check acts as much as the SAM check does
            if route is None:
                # Nowhere to go: say it once; no plan will re-task a drone this short.
                self.returning[drone_id] = _NOWHERE
                host.recorder.event(
                    tick,
                    "NO_SAFE_OPTION",
                    {"drone": drone_id, "reason": "fuel safety: no airport within its fuel"},
                )
                continue
            host.recorder.event(
                tick,
                "RETURN_TO_BASE",
                {
                    "drone": drone_id,
                    "airport": route[0].id,
                    "fuel": fuel,
                    "needed": route[1].length,
                    "reserve": reserve,
                },
            )
            self._home(drone_id, "fuel safety", route=route)

    def _ends_at_airport(self, drone_id: str, flight: Flight, *, held: bool = False) -> bool:
        """Whether the flight's path ends at an airport: kept per drone until its path
        changes (airports never do): 50 airports x 1,000 drones, twice a check, otherwise.
        ``held``: the flight a hold left (kept apart from the hold's own)."""
        ends_of = self._held_ends if held else self._ends
        kept = ends_of.get(drone_id)
        if kept is not None and kept[0] is flight.path:
            return kept[1]
        ends = self._path_ends_at_airport(flight.path)
        ends_of[drone_id] = (flight.path, ends)
        return ends

    def _airport_at(self, point: tuple[float, float]) -> str | None:
        """The airport at ``point``, if one is."""
        return self._airports.at(self.host.sim.world.known_environment.airports, point)

    def _path_ends_at_airport(self, path: Path) -> bool:
        return self._airport_at(path.end) is not None

    def describe(self) -> dict[str, Any]:
        """What the layer is doing now, for the scene and the report."""
        return {
            "returning": dict(self.returning),
            "held": dict(self.held),
            "actions": self.actions,
            "infeasible": dict(self.infeasible),
            "warnings": {d: dict(w) for d, w in self.warnings.items()},
        }
