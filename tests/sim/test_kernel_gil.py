"""A small fleet's tick holds the GIL (``sim._kernels.tick_kernel_held``), a swarm's gives it
away (``tick_kernel``): the same compiled code, so the same world to the bit. Both run here
on copies of the fleet's arrays every tick of whole missions (targets collected, hidden SAMs
detected, drones landing), and what they write must be equal byte for byte."""

from __future__ import annotations

import numpy as np
import pytest

import sim._kernels as K
from planner.scenario import load_scenario
from sim import Sim
from tests.conftest import SCENARIOS
from tests.sim.conftest import efficient_plan


def _both(fleet) -> None:
    """Each kernel once on its own copy of the fleet's current arrays: equal outputs."""
    env, lay = fleet.env, fleet.layout
    written = (fleet.F, fleet.status, lay.cur, lay.wp_cur, env.t_alive, env.t_by, env.s_known)
    read = (lay.p_lo, lay.p_hi, lay.P, lay.wp_s, lay.wp_t, lay.wp_hi, fleet.end_airport)
    outputs = []
    for kernel in (K.tick_kernel, K.tick_kernel_held):
        F, status, cur, wp_cur, t_alive, t_by, s_known = (a.copy() for a in written)
        p_lo, p_hi, P, wp_s, wp_t, wp_hi, end_airport = read
        ev = np.zeros((1024, 4), dtype=np.int64)  # as Fleet.advance sizes it: room to spare
        ne = kernel(
            0.05, F, status, cur, p_lo, p_hi, P, wp_s, wp_t, wp_cur, wp_hi, end_airport,
            env.T, env.t_type, t_alive, t_by, fleet.elig, float(fleet.config.capture_radius),
            env.SM, env.s_alive, s_known, float(fleet.config.sensor_range), ev,
        )  # fmt: skip
        outputs.append(
            [ne, *(a.tobytes() for a in (F, status, cur, wp_cur, t_alive, t_by, s_known, ev))]
        )
    assert outputs[0] == outputs[1]


@pytest.mark.parametrize("name", ["demo.json", "popup_sam.json"])
def test_the_held_and_the_released_tick_kernels_write_the_same_world(name: str) -> None:
    scenario = load_scenario(SCENARIOS / name)
    mission, plan = efficient_plan(scenario)
    sim = Sim(scenario, plan, mission=mission)
    fleet = sim.world._fleet  # noqa: SLF001 (the kernels' arrays: nothing public hands them out)
    assert fleet.status.size < K.NOGIL_FLEET  # this mission's ticks run the held one
    events = 0
    while not sim.done:
        _both(fleet)
        events += len(sim.step().events)
    assert sim.tick > 1000 and events > 0
