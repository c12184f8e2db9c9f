/* The status line at the top: run, tick, time, mode, speed (and the active speed button),
 * points, and the frames the server dropped for this page. */

import { $ } from "./dom.js";
import { fmtTime } from "./format.js";
import { state } from "./store.js";

/** Write the status line from the latest scene, telemetry, status and stats. */
export function renderStatus() {
  const scene = state.scene || {};
  const tel = state.telemetry || {};
  const ended = state.status && ["ended", "crashed"].includes(state.status.state);
  $("#st-run").textContent = "run " + (state.runId ? state.runId.slice(0, 8) : "–");
  $("#st-run").title = state.runId || "";
  $("#st-tick").textContent = "tick " + (tel.tick ?? scene.tick ?? "–");
  $("#st-time").textContent = "t " + fmtTime(tel.time ?? scene.time);
  const mode = ended ? state.status.state.toUpperCase() : (tel.mode || scene.mode || "–");
  const modeEl = $("#st-mode");
  modeEl.textContent = mode; modeEl.dataset.mode = mode;
  const speed = scene.speed;
  $("#st-speed").textContent = "speed " + (speed === null || speed === undefined ? (scene.run_id ? "max" : "–") : speed + "x");
  for (const b of document.querySelectorAll("#speeds button")) {
    const v = b.dataset.speed;
    b.classList.toggle("active", (v === "max" && speed === null) || Number(v) === speed);
  }
  const collected = Object.values(tel.drones || {}).reduce((s, d) => s + (d.points || 0), 0)
    || scene.collected_points || 0;
  $("#st-points").textContent = `points ${collected} collected · ${scene.planned_points ?? "–"} planned`;
  const st = state.stats;
  $("#st-dropped").textContent = "dropped " + (st ? st.dropped_total : 0);
  if (st) $("#st-dropped").title = "dropped per topic: " + JSON.stringify(st.dropped) + `, pending ${st.pending}`;
}
