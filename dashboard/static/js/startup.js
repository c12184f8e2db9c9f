/* What the map says before there is anything to draw: from the first byte of a live page
 * until the first plan arrives, the run's start-up in words with the time it has taken
 * ("starting — compiling the planner (first run only)", then "planning the first mission",
 * from the status' phase and started_at); on a dashboard of stored runs, that there is no
 * live run and where the runs are; a run that failed to start, why. Shown over the map
 * (#map-status) and gone once the first scene is drawn. */

import { $ } from "./dom.js";
import { fmtTime } from "./format.js";
import { liveDashboard, startupPhase } from "./run_state.js";
import { schedule, state } from "./store.js";

const WORDS = {
  starting: "starting the mission",
  compiling: "starting — compiling the planner (first run only)",
  planning: "planning the first mission",
  forking: "forking — rebuilding the parent's state at the fork",
};

let ticker = null;

/** The words over the map now, and whether something is under way: [text, busy] or null. */
export function startupWords() {
  if (state.replay || state.compare) return null;
  if (state.live === false && !state.runId) {
    return ["no live run: this dashboard serves the stored runs of its trace store — open one from Runs (or fork one to fly it again)", false];
  }
  if (!liveDashboard()) return null;
  const st = state.status;
  if (st && st.state === "failed" && !state.scene) return [`the mission failed to start: ${st.error || "see the console it runs in"}`, false];
  const phase = startupPhase();
  if (phase) return [WORDS[phase] || `starting (${phase})`, true];
  if (!state.scene && state.wsState === "open" && state.live !== false) return ["waiting for the mission to start", true];
  return null;
}

/** Draw the start-up words and the time taken (each render pass; a timer keeps the clock
 * going while something is under way). */
export function renderStartup() {
  const box = $("#map-status");
  const said = startupWords();
  box.hidden = !said;
  if (!said) { if (ticker !== null) { clearInterval(ticker); ticker = null; } return; }
  const [text, busy] = said;
  box.dataset.kind = busy ? "busy" : "none";
  box.dataset.phase = startupPhase() || "";
  if ($("#map-status-text").textContent !== text) $("#map-status-text").textContent = text;
  const since = state.status && state.status.started_at;
  const clock = busy && Number.isFinite(since) ? fmtTime(Math.max(0, Date.now() / 1000 - since)) : "";
  $("#map-status-clock").textContent = clock;
  $("#map-status-clock").dataset.seconds = clock && String(Math.max(0, Math.floor(Date.now() / 1000 - since)));
  if (busy && ticker === null) ticker = setInterval(schedule, 500);
  if (!busy && ticker !== null) { clearInterval(ticker); ticker = null; }
}
