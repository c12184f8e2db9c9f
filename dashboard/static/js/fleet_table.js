/* The fleet table: one row per drone with its status, fuel (of its budget) and margin (the
 * fuel left once its planned path is flown), points collected, next target, and when it
 * must turn home: "bingo", the fuel that just covers the straight way to its nearest
 * allowed end airport plus the policy's reserve (and the spare fuel above it), or, when its
 * path goes further than that, the point of no return: how many km along its path it can
 * still fly. Status, fuel and points come from each telemetry frame, the rest from the
 * scene (mission/live/scene.py computes them). A click on a row selects the drone (the
 * inspector) and centres the map on it. */

import { $ } from "./dom.js";
import { droneColour, droneNow } from "./drones.js";
import { label } from "./format.js";
import { select } from "./select.js";
import { state } from "./store.js";
import { centreOn } from "./viewport.js";

const km = (v) => (v === null || v === undefined ? "–" : `${Math.round(v)}`);
const signed = (v) => (v === null || v === undefined ? "–" : `${v >= 0 ? "+" : "−"}${Math.abs(Math.round(v))}`);

/** The first target of the drone's route not collected yet (at the playhead in a replay). */
function nextTarget(d, scene) {
  const status = new Map((scene.targets || []).map((t) => [t.id, t.status]));
  return (d.route || []).find((t) => status.has(t) && status.get(t) !== "collected") || null;
}

/** What one drone's row says: {cell: [text, title]}. In a replay the turn-home figures
 * are shown only at a stored snapshot's tick (they depend on where the drone is). */
export function fleetRow(id, d, live, scene) {
  const status = live.status || d.status;
  const fuel = live.fuel ?? d.fuel;
  const points = live.points ?? d.points ?? 0;
  const airborne = status === "flying" || status === "holding";
  const replay = scene.replay;
  const current = !replay || replay.snapshot_tick === scene.tick;
  let pnr = ["–", airborne ? "a replay knows it at its stored snapshots only" : "not airborne"];
  if (airborne && current && d.bingo_km !== null && d.bingo_km !== undefined) {
    const why = `turn home at ${km(d.bingo_km)} km of fuel: ${km(d.home_km)} km straight to the`
      + ` nearest allowed end airport (SAMs not counted) + the reserve`;
    pnr = d.pnr_km !== null && d.pnr_km !== undefined
      ? [`PNR in ${km(d.pnr_km)} km`, `${why}; its path goes past it after ${km(d.pnr_km)} km`]
      : [`bingo ${km(d.bingo_km)} ${signed(d.spare_km)}`, `${why}; ${km(d.spare_km)} km spare now, and its path comes back within its fuel`];
  }
  return {
    status: [status, d.enabled === false ? "disabled in the scenario" : d.warning || ""],
    fuel: [`${km(fuel)}/${km(d.budget)}`, "km of fuel left / budget"],
    margin: [airborne ? signed(d.margin_km) : "–", "km of fuel left once its planned path is flown"],
    points: [`${Math.round(points * 10) / 10}`, "points collected"],
    next: [nextTarget(d, scene) || "–", (d.route || []).join(" → ")],
    pnr,
  };
}

const COLUMNS = ["status", "fuel", "margin", "points", "next", "pnr"];

/** Draw the table again from the scene and the latest telemetry (rows kept, cells updated). */
export function renderFleet() {
  const body = $("#fleet-body");
  const scene = state.scene;
  if (!body || !scene) return;
  const ids = Object.keys(scene.drones || {}).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const seen = new Set(ids);
  for (const tr of [...body.children]) if (!seen.has(tr.dataset.droneId)) tr.remove();
  for (const id of ids) {
    let tr = body.querySelector(`tr[data-drone-id="${CSS.escape(id)}"]`);
    if (!tr) {
      tr = document.createElement("tr");
      tr.dataset.droneId = id;
      const th = document.createElement("th");
      const sw = document.createElement("i");
      sw.className = "swatch";
      sw.style.background = droneColour(id);
      th.append(sw, label(id));
      tr.appendChild(th);
      for (const c of COLUMNS) {
        const td = document.createElement("td");
        td.dataset.col = c;
        tr.appendChild(td);
      }
      tr.title = "click: centre the map on it";
      body.appendChild(tr);
    }
    const now = droneNow(id);
    const row = fleetRow(id, scene.drones[id], { status: now.status, fuel: now.fuel, points: now.points }, scene);
    tr.dataset.status = row.status[0];
    tr.classList.toggle("selected", Boolean(state.selected && state.selected.kind === "drone" && state.selected.id === id));
    for (const c of COLUMNS) {
      const td = tr.querySelector(`td[data-col="${c}"]`);
      if (td.textContent !== row[c][0]) td.textContent = row[c][0];
      if (td.title !== row[c][1]) td.title = row[c][1];
    }
    tr.classList.toggle("short", row.pnr[0].startsWith("PNR"));
    // a plan in force that meets a known SAM or no longer fits the fuel: marked until fixed
    tr.classList.toggle("warn", Boolean(!scene.replay && scene.drones[id].warning));
  }
}

/** A click on a row selects the drone (the inspector) and centres the map on it. */
export function initFleet() {
  $("#fleet-body").addEventListener("click", (ev) => {
    const tr = ev.target.closest("tr[data-drone-id]");
    if (!tr) return;
    const d = droneNow(tr.dataset.droneId);
    select({ kind: "drone", id: tr.dataset.droneId });
    if (d) centreOn(d.x, d.y);
  });
}
