/* A plan in force that meets a known SAM ahead, in words that count down. The data is the
 * safety layer's warning (executive/loop/safety.py, PLAN_UNSAFE; the scene's draft.hazards
 * and drone.hazard): the mission ticks at which the plan in force would enter the SAM
 * (enters_tick) and at which the layer acts (acts_tick), and how. The seconds left are those
 * ticks against the mission time the page shows now (every telemetry frame), so the words
 * count down as the mission advances and say "now", then "passed", once the moment is
 * reached. The review panel, the fleet row, the drone's marker on the map and the banner
 * after a Reject word it here. */

import { fmtTime, label } from "./format.js";
import { missionTime } from "./run_state.js";
import { state } from "./store.js";

/** When a moment at mission tick `tick` is, seen from `now` (seconds): " in 0:42", " now"
 * (within the second it is reached), ": passed 0:03 ago". */
export function countdown(tick, hz, now) {
  const left = tick / hz - now;
  if (left > 0) return ` in ${fmtTime(Math.ceil(left))}`;
  if (left > -1) return " now";
  return `: passed ${fmtTime(-left)} ago`;
}

/** A hazard ({drone, sam, enters_tick, acts_tick, action}) in words at the mission time
 * the page shows: {enters: "plan in force enters S9 on D2 in 0:42", acts: "safety layer
 * acts on D2 in 0:15 (divert around S9, else hold, else home) unless a plan takes over"}. */
export function hazardWords(h) {
  const hz = (state.scene && state.scene.tick_hz) || 20;
  const now = missionTime() ?? 0;
  const d = label(h.drone);
  return {
    enters: `plan in force enters ${h.sam} on ${d}${countdown(h.enters_tick, hz, now)}`,
    acts: `safety layer acts on ${d}${countdown(h.acts_tick, hz, now)} (${h.action}) unless a plan takes over`,
  };
}

/** The hazard as one line (a tooltip, a banner). */
export function hazardText(h) {
  const w = hazardWords(h);
  return `${w.enters}; ${w.acts}`;
}

/** What is wrong with a drone's plan in force, in words ("" when nothing): fuel short of
 * it (the scene's drone.warning), or a known SAM ahead counting down (drone.hazard). The
 * fleet row's ⚠ and the map's are this one test, so the two never disagree. */
export function planWarning(d) {
  if (!d) return "";
  return d.warning || (d.hazard ? hazardText(d.hazard) : "");
}
