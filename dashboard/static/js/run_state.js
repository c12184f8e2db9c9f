/* What the page knows about the run it shows, in words other modules share: whether a live
 * run is there at all, whether it is over, how its start-up is going, and its mission time
 * now. */

import { state } from "./store.js";

export const TERMINAL = new Set(["ended", "crashed", "interrupted", "failed"]);

/** Whether the live run is over (ended, crashed, interrupted, failed). */
export function runOver() {
  const st = state.status && state.status.state;
  return Boolean(st && TERMINAL.has(st));
}

/** Whether this page shows a live run or waits for one (false: a dashboard of stored runs
 * only, or a replay / compare view). */
export function liveDashboard() {
  return !state.replay && !state.compare && state.live !== false;
}

/** The start-up's phase while the run starts (before its first plan), else null:
 * "starting" (the run is being set up), "compiling" (the planner's kernels load: compiled on
 * the first run only), "planning" (the first plan), "forking" (a fork rebuilds its parent's
 * state). */
export function startupPhase() {
  const st = state.status;
  if (!st || st.state !== "starting" || state.scene) return null;
  return st.phase || "starting";
}

/** The mission time the page shows, in seconds: the latest telemetry frame's (every tick),
 * else the scene's; null before either. A frame's time is the start of the next tick, as
 * the scene's: tick N of the executive is N / tick_hz seconds. */
export function missionTime() {
  const t = state.telemetry && state.telemetry.time;
  if (t !== undefined && t !== null) return t;
  const s = state.scene && state.scene.time;
  return s === undefined ? null : s;
}
