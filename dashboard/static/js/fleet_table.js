/* The fleet table: one row per drone with its status, fuel (of its budget) and margin (the
 * fuel left once its planned path is flown), points collected, next target, and when it
 * must turn home: "bingo", the fuel that just covers the straight way to its nearest
 * allowed end airport plus the policy's reserve (and the spare fuel above it), or, when its
 * path goes further than that, the point of no return: how many km along its path it can
 * still fly. Status, fuel and points come from each telemetry frame, the rest from the
 * scene (mission/live/scene.py computes them). A click on a row selects the drone (the
 * inspector) and centres the map on it. A row whose plan in force is unsafe (fuel short of
 * it, a known SAM ahead) is marked ⚠ with the words in its status cell's title, a SAM's
 * counting down (hazard.js planWarning, as the drone's marker on the map; redrawn with
 * every telemetry frame). Above VIRTUAL_ROWS drones only the rows scrolled to are in the
 * DOM, between two spacers as tall as the rows left out; a drone selected on the map
 * scrolls the table to its row. */

import { $ } from "./dom.js";
import { droneColour, droneIds, droneNow } from "./drones.js";
import { label } from "./format.js";
import { planWarning } from "./hazard.js";
import { select } from "./select.js";
import { schedule, state } from "./store.js";
import { centreOn } from "./viewport.js";

const km = (v) => (v === null || v === undefined ? "–" : `${Math.round(v)}`);
const signed = (v) => (v === null || v === undefined ? "–" : `${v >= 0 ? "+" : "−"}${Math.abs(Math.round(v))}`);

const statuses = new WeakMap(); // a scene's targets -> id -> status, built once per scene

/** The first target of the drone's route not collected yet (at the playhead in a replay). */
function nextTarget(d, scene) {
  const targets = scene.targets || [];
  let status = statuses.get(targets);
  if (!status) { status = new Map(targets.map((t) => [t.id, t.status])); statuses.set(targets, status); }
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
    status: [status, d.enabled === false ? "disabled in the scenario" : planWarning(d)],
    fuel: [`${km(fuel)}/${km(d.budget)}`, "km of fuel left / budget"],
    margin: [airborne ? signed(d.margin_km) : "–", "km of fuel left once its planned path is flown"],
    points: [`${Math.round(points * 10) / 10}`, "points collected"],
    next: [nextTarget(d, scene) || "–", (d.route || []).join(" → ")],
    pnr,
  };
}

const COLUMNS = ["status", "fuel", "margin", "points", "next", "pnr"];

// Above this many drones only the rows in sight are in the DOM (a virtualised table): a
// swarm's thousand rows updated on every frame would cost more than the map.
export const VIRTUAL_ROWS = 50;
const OVERSCAN = 8; // rows drawn beyond each edge, so a fast scroll shows no gap
let rowPx = 0; // a row's height, measured once from a drawn row (18 until then)
// The panel's scroll and size, read when they change (scroll, resize), never in a render
// pass: a read there after the frame's writes would lay the whole page out again.
const view = { top: 0, height: 0, head: 0 };

function measureBox(box) {
  const head = $("#fleet thead");
  view.top = box.scrollTop;
  view.height = box.clientHeight;
  view.head = head ? head.offsetHeight : 0;
}

function spacer(body, cls) {
  let tr = body.querySelector("tr." + cls);
  if (!tr) {
    tr = document.createElement("tr");
    tr.className = cls;
    tr.setAttribute("aria-hidden", "true");
    const td = document.createElement("td");
    td.colSpan = COLUMNS.length + 1;
    tr.appendChild(td);
  }
  return tr;
}

/** The ids whose rows are drawn: all of them, or above VIRTUAL_ROWS the ones the panel's
 * scroll shows (and the spacers' heights that keep the scroll bar true). */
function visibleRows(ids) {
  if (ids.length <= VIRTUAL_ROWS) return { shown: ids, before: 0, after: 0 };
  const row = rowPx || 18;
  const top = Math.max(0, view.top - view.head);
  const height = view.height > 0 ? view.height : 400;
  const first = Math.max(0, Math.floor(top / row) - OVERSCAN);
  const last = Math.min(ids.length, Math.ceil((top + height) / row) + OVERSCAN);
  return { shown: ids.slice(first, last), before: first, after: ids.length - last };
}

let revealed = null; // the drone last scrolled to

/** A drone newly selected (on the map, say) whose row is not drawn: the table scrolls to it. */
function revealSelected(ids, body) {
  const sel = state.selected && state.selected.kind === "drone" ? state.selected.id : null;
  if (sel === revealed) return;
  revealed = sel;
  if (!sel || ids.length <= VIRTUAL_ROWS || body.querySelector(`tr[data-drone-id="${CSS.escape(sel)}"]`)) return;
  const box = body.closest(".panel-body");
  const at = ids.indexOf(sel);
  if (box && at >= 0) {
    box.scrollTop = Math.max(0, view.head + at * (rowPx || 18) - (view.height || 400) / 2);
    view.top = box.scrollTop;
  }
}

function newRow(id) {
  const tr = document.createElement("tr");
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
  return tr;
}

/** Draw the table again from the scene and the latest telemetry (rows kept, cells updated;
 * a swarm's rows only where the panel is scrolled to). */
export function renderFleet() {
  const body = $("#fleet-body");
  const scene = state.scene;
  if (!body || !scene) return;
  const ids = droneIds();
  revealSelected(ids, body);
  const { shown, before, after } = visibleRows(ids);
  const rows = new Map();
  for (const tr of body.querySelectorAll("tr[data-drone-id]")) rows.set(tr.dataset.droneId, tr);
  const order = [];
  const row = rowPx || 18;
  if (before) { const s = spacer(body, "fleet-before"); s.firstChild.style.height = before * row + "px"; order.push(s); }
  for (const id of shown) {
    const tr = rows.get(id) || newRow(id);
    rows.delete(id);
    order.push(tr);
    const now = droneNow(id);
    const row = fleetRow(id, scene.drones[id], { status: now.status, fuel: now.fuel, points: now.points }, scene);
    tr.dataset.status = row.status[0];
    tr.classList.toggle("selected", Boolean(state.selected && state.selected.kind === "drone" && state.selected.id === id));
    for (const td of tr.children) {
      const c = td.dataset.col;
      if (!c) continue;
      if (td.textContent !== row[c][0]) td.textContent = row[c][0];
      if (td.title !== row[c][1]) td.title = row[c][1];
    }
    tr.classList.toggle("short", row.pnr[0].startsWith("PNR"));
    // a plan in force that meets a known SAM or no longer fits the fuel: marked until fixed
    tr.classList.toggle("warn", Boolean(!scene.replay && planWarning(scene.drones[id])));
  }
  if (after) { const s = spacer(body, "fleet-after"); s.firstChild.style.height = after * row + "px"; order.push(s); }
  // the rows in order, moving only what is out of place (a row kept keeps its hover and focus)
  let at = body.firstChild;
  for (const tr of order) {
    if (tr === at) { at = at.nextSibling; continue; }
    body.insertBefore(tr, at);
  }
  while (at) { const next = at.nextSibling; at.remove(); at = next; }
  if (!rowPx && ids.length > VIRTUAL_ROWS) { // once: a row's height, and the panel's box
    const drawn = order.find((tr) => tr.dataset.droneId);
    if (drawn && drawn.offsetHeight > 0) rowPx = drawn.offsetHeight;
    const box = body.closest(".panel-body");
    if (box) measureBox(box);
    state.fleetDirty = true; // drawn again with the true heights
  }
}

/** A click on a row selects the drone (the inspector) and centres the map on it. */
export function initFleet() {
  const box = $("#fleet-body").closest(".panel-body");
  // a swarm's table draws the rows scrolled to
  if (box) {
    box.addEventListener("scroll", () => { measureBox(box); state.fleetDirty = true; schedule(); }, { passive: true });
    new ResizeObserver(() => { measureBox(box); state.fleetDirty = true; schedule(); }).observe(box);
  }
  $("#fleet-body").addEventListener("click", (ev) => {
    const tr = ev.target.closest("tr[data-drone-id]");
    if (!tr) return;
    const d = droneNow(tr.dataset.droneId);
    select({ kind: "drone", id: tr.dataset.droneId });
    if (d) centreOn(d.x, d.y);
  });
}
