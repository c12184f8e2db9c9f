/* The drone markers: an arrow in the drone's colour turned to its heading, a fuel ring
 * (green, orange under a quarter, red when the fuel margin is negative, grey once landed,
 * none once lost: a cross instead) and a label with the fuel and margin (or "lost",
 * "landed"), and a ⚠ over a drone whose plan in force is unsafe (a known SAM ahead, fuel
 * short of it: the fleet row's test, hazard.js planWarning), its tooltip the words, a SAM's
 * counting down; live only, as the row's. Moved on every telemetry frame; rebuilt only
 * when the map's scale changes. After the drones moved, every label of the map is placed
 * again (map.js layoutLabels) and the selection's ring follows (select.js). A drone
 * switched off in the Layers box is not drawn. A swarm is drawn on a canvas instead, with
 * no element per drone (swarm.js). */

import { $, el, flippedText } from "./dom.js";
import { label } from "./format.js";
import { planWarning } from "./hazard.js";
import { droneShown } from "./layers.js";
import { layoutLabels } from "./map.js";
import { renderSelection, selectedPlace } from "./select.js";
import { state } from "./store.js";
import { drawSwarmDrones, swarmMode } from "./swarm.js";

const PALETTE = ["#4fc3f7", "#ffb74d", "#ba68c8", "#81c784", "#f06292", "#fff176",
                 "#4dd0e1", "#a1887f", "#90caf9", "#e6ee9c"];

/** The drones' ids of a scene in order (D1, D2 ... D10), sorted once per scene: a swarm's
 * frame asks for them many times. */
const sortedIds = new WeakMap();
function idsOf(drones) {
  let ids = sortedIds.get(drones);
  if (!ids) {
    const collator = new Intl.Collator(undefined, { numeric: true });
    ids = Object.keys(drones).sort(collator.compare);
    sortedIds.set(drones, ids);
  }
  return ids;
}
const colourIndex = new WeakMap(); // sorted ids -> id -> place

/** The colour of a drone: its place among the scene's drone ids (or the ids given), in
 * the palette. */
export function droneColour(id, among = null) {
  const ids = among ? among.slice().sort(new Intl.Collator(undefined, { numeric: true }).compare)
    : idsOf((state.scene && state.scene.drones) || {});
  let index = colourIndex.get(ids);
  if (!index) { index = new Map(ids.map((d, i) => [d, i])); colourIndex.set(ids, index); }
  return PALETTE[(index.get(id) ?? 0) % PALETTE.length];
}

const ENDED = new Set(["lost", "landed"]);
const WARN_DY = 2.6; // the ⚠'s baseline above the drone, in map units (state.unit)

/** A drone as the page knows it now: the scene's record with the latest telemetry over it
 * (position, heading, fuel, status, points). A loss or landing the scene knows of wins over
 * an older telemetry row (a replay's stored rows are a few ticks apart: a drone lost at T is
 * lost at T, not "flying" as the row before said). */
export function droneNow(id) {
  const scene = state.scene || {};
  const d = (scene.drones || {})[id];
  if (!d) return null;
  const tel = state.telemetry || {};
  const live = (tel.drones || {})[id] || {};
  const out = { ...d, ...live };
  const rowTick = tel.row_tick ?? tel.tick;
  if (ENDED.has(d.status) && !ENDED.has(live.status) && !(rowTick > scene.tick)) out.status = d.status;
  return out;
}

/** The drones' ids in order (D1, D2 ... D10). */
export function droneIds() {
  return idsOf((state.scene && state.scene.drones) || EMPTY);
}
const EMPTY = {};

function ringPath(r, frac) {
  frac = Math.min(Math.max(frac, 0), 1);
  if (frac >= 0.999) return `M ${r} 0 A ${r} ${r} 0 1 1 ${-r} 0 A ${r} ${r} 0 1 1 ${r} 0`;
  const a = frac * 2 * Math.PI;
  return `M ${r} 0 A ${r} ${r} 0 ${frac > 0.5 ? 1 : 0} 1 ${r * Math.cos(a)} ${r * Math.sin(a)}`;
}

/** What a drone's label says: its fuel and margin while it can fly, else what became of it. */
export function labelText(id, status, fuel, margin) {
  if (status === "lost") return `${label(id)} lost`;
  if (status === "landed") return `${label(id)} landed ${Math.round(fuel)} km`;
  return `${label(id)} ${Math.round(fuel)} km`
    + (margin !== null && margin !== undefined ? ` (${margin >= 0 ? "+" : ""}${Math.round(margin)})` : "");
}

function build(g, id, u) {
  const grp = el("g", { class: "drone", "data-drone-id": id, "data-unit": String(u) }, g);
  el("circle", { class: "ring-bg", r: u * 2.1, "vector-effect": "non-scaling-stroke", "stroke-width": 3 }, grp);
  el("path", { class: "ring", "vector-effect": "non-scaling-stroke", "stroke-width": 3 }, grp);
  const body = el("g", { class: "body" }, grp);
  el("polygon", { points: `${1.7 * u},0 ${-1.1 * u},${1.0 * u} ${-0.5 * u},0 ${-1.1 * u},${-1.0 * u}`,
                  fill: droneColour(id), "vector-effect": "non-scaling-stroke", "stroke-width": 1 }, body);
  const cross = el("g", { class: "cross" }, grp); // drawn for a lost drone only
  const c = u * 1.6;
  el("line", { x1: -c, y1: -c, x2: c, y2: c, "vector-effect": "non-scaling-stroke" }, cross);
  el("line", { x1: -c, y1: c, x2: c, y2: -c, "vector-effect": "non-scaling-stroke" }, cross);
  flippedText(grp, u * 2.4, -u * 1.6, label(id), u * 1.25, { class: "dlabel lbl" });
  // above the fuel ring, shown while the plan in force is unsafe (the words in its title)
  const warn = el("g", { class: "hazard" }, grp);
  el("title", {}, warn);
  flippedText(warn, 0, WARN_DY * u, "\u26A0", u * 2, { "text-anchor": "middle" });
  return grp;
}

/** Place every drone of the scene at its latest telemetry; forget the ones gone. A lost
 * drone is a grey marker with a cross and no fuel ring; a landed one a dim marker with a
 * grey ring. Then every label of the map is placed clear of the others and of the markers. */
export function renderDrones() {
  const scene = state.scene;
  if (!scene) return;
  const g = $("#l-drones");
  const u = state.unit;
  if (swarmMode(scene)) { // a swarm: on the canvas (swarm.js), no element per drone
    if (g.childElementCount) g.replaceChildren();
    drawSwarmDrones(droneIds(), droneNow, (id) => droneColour(id),
                    (id, d) => labelText(id, d.status, d.fuel, d.status === "lost" ? null : d.margin_km));
    // the SVG's labels (airports, SAMs) do not move with the drones: placed with the scene
    // (map.js drawMap), not on every frame
    renderSelection();
    return;
  }
  const seen = new Set();
  const labels = [];
  const markers = [];
  for (const id of droneIds()) {
    if (!droneShown(id)) continue;
    const d = droneNow(id);
    seen.add(id);
    const x = d.x, y = d.y, heading = d.heading ?? 0, fuel = d.fuel, status = d.status;
    let grp = g.querySelector(`g.drone[data-drone-id="${CSS.escape(id)}"]`);
    if (!grp || grp.dataset.unit !== String(u)) {
      if (grp) grp.remove();
      grp = build(g, id, u);
    }
    grp.setAttribute("transform", `translate(${x},${y})`);
    grp.dataset.x = x; grp.dataset.y = y; grp.dataset.status = status;
    grp.querySelector("g.body").setAttribute("transform", `rotate(${heading * 180 / Math.PI})`);
    grp.classList.toggle("lost", status === "lost");
    grp.classList.toggle("landed", status === "landed");
    const frac = d.budget > 0 ? fuel / d.budget : 0;
    const ring = grp.querySelector("path.ring");
    ring.setAttribute("d", status === "lost" ? "" : ringPath(u * 2.1, frac));
    const margin = status === "lost" ? null : d.margin_km;
    ring.setAttribute("stroke", status === "landed" ? "#78909c"
                                : margin !== null && margin !== undefined && margin < 0 ? "#ef5350"
                                : frac < 0.25 ? "#ffa726" : "#66bb6a");
    const text = labelText(id, status, fuel, margin);
    const textEl = grp.querySelector("text.dlabel");
    if (textEl.textContent !== text) textEl.textContent = text;
    labels.push({ id, textEl, x, y, text });
    const r = u * 2.3; // the fuel ring and its stroke
    markers.push({ x0: x - r, y0: y - r, x1: x + r, y1: y + r });
    const unsafe = scene.replay ? "" : planWarning(d);
    grp.classList.toggle("warn", Boolean(unsafe));
    if (unsafe) {
      const tip = grp.querySelector("g.hazard > title");
      if (tip.textContent !== unsafe) tip.textContent = unsafe; // a countdown: every frame
      // the ⚠ is a marker too: no label over it
      markers.push({ x0: x - u, y0: y + r, x1: x + u, y1: y + (WARN_DY + 2) * u });
    }
  }
  for (const grp of [...g.children]) if (!seen.has(grp.dataset.droneId)) grp.remove();
  const sel = selectedPlace(); // its ring is a marker too: no label under it
  if (sel) { const r = sel.r + u * 0.4; markers.push({ x0: sel.x - r, y0: sel.y - r, x1: sel.x + r, y1: sel.y + r }); }
  layoutLabels(labels, markers);
  renderSelection();
}
