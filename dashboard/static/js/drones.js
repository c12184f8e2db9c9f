/* The drone markers: an arrow in the drone's colour turned to its heading, a fuel ring
 * (green, orange under a quarter, red when the fuel margin is negative, grey once landed,
 * none once lost: a cross instead) and a label with the fuel and margin (or "lost",
 * "landed"), placed clear of the other labels. Moved on every telemetry frame; rebuilt only
 * when the map's scale changes. */

import { $, el, flippedText } from "./dom.js";
import { label } from "./format.js";
import { measured, placeLabels, textBox } from "./labels.js";
import { state } from "./store.js";

const PALETTE = ["#4fc3f7", "#ffb74d", "#ba68c8", "#81c784", "#f06292", "#fff176",
                 "#4dd0e1", "#a1887f", "#90caf9", "#e6ee9c"];

/** The colour of a drone: its place among the scene's drone ids (or the ids given), in
 * the palette. */
export function droneColour(id, among = null) {
  const ids = (among || Object.keys((state.scene && state.scene.drones) || {})).slice().sort(
    (a, b) => a.localeCompare(b, undefined, { numeric: true }));
  const i = Math.max(0, ids.indexOf(id));
  return PALETTE[i % PALETTE.length];
}

function ringPath(r, frac) {
  frac = Math.min(Math.max(frac, 0), 1);
  if (frac >= 0.999) return `M ${r} 0 A ${r} ${r} 0 1 1 ${-r} 0 A ${r} ${r} 0 1 1 ${r} 0`;
  const a = frac * 2 * Math.PI;
  return `M ${r} 0 A ${r} ${r} 0 ${frac > 0.5 ? 1 : 0} 1 ${r * Math.cos(a)} ${r * Math.sin(a)}`;
}

/** What a drone's label says: its fuel and margin while it can fly, else what became of it. */
function labelText(id, status, fuel, margin) {
  if (status === "lost") return `${label(id)} lost`;
  if (status === "landed") return `${label(id)} landed ${Math.round(fuel)} km`;
  return `${label(id)} ${Math.round(fuel)} km`
    + (margin !== null && margin !== undefined ? ` (${margin >= 0 ? "+" : ""}${Math.round(margin)})` : "");
}

/** The airports' squares and labels, which drone labels keep clear of (km boxes). */
function airportObstacles(scene, u) {
  const out = [];
  for (const a of scene.airports || []) {
    out.push({ x0: a.x - u * 0.8, y0: a.y - u * 0.8, x1: a.x + u * 0.8, y1: a.y + u * 0.8 });
    const drawn = $(`#l-airports g[data-airport-id="${CSS.escape(a.id)}"] text`);
    out.push(textBox(a.x + u * 1.1, a.y - u * 0.9, a.id, u * 1.3, measured(drawn)));
  }
  return out;
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
  flippedText(grp, u * 2.4, -u * 1.6, label(id), u * 1.25, { class: "dlabel" });
  return grp;
}

/** Place every drone of the scene at its latest telemetry; forget the ones gone. A lost
 * drone is a grey marker with a cross and no fuel ring; a landed one a dim marker with a
 * grey ring. Labels are placed clear of each other and of the airports (labels.js). */
export function renderDrones() {
  const scene = state.scene;
  if (!scene) return;
  const g = $("#l-drones");
  const u = state.unit;
  const tel = (state.telemetry && state.telemetry.drones) || {};
  const seen = new Set();
  const labels = [];
  const markers = [];
  const ids = Object.keys(scene.drones || {}).sort((a, b) => a.localeCompare(b, undefined, { numeric: true }));
  for (const id of ids) {
    const d = scene.drones[id];
    seen.add(id);
    const live = tel[id] || {};
    const x = live.x ?? d.x, y = live.y ?? d.y, heading = live.heading ?? d.heading ?? 0;
    const fuel = live.fuel ?? d.fuel, status = live.status || d.status;
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
    textEl.textContent = text;
    labels.push({ id, grp, textEl, x, y, text, size: u * 1.25, gap: u * 2.4 });
    markers.push({ x0: x - u * 2.1, y0: y - u * 2.1, x1: x + u * 2.1, y1: y + u * 2.1 });
  }
  // measured after every text is set: one layout for the frame, not one per label
  for (const it of labels) it.width = measured(it.textEl);
  const places = placeLabels(labels, [...airportObstacles(scene, u), ...markers]);
  labels.forEach((it, i) => {
    const t = it.grp.querySelector("text.dlabel");
    t.setAttribute("x", places[i].x);
    t.setAttribute("y", -places[i].y);
  });
  for (const grp of [...g.children]) if (!seen.has(grp.dataset.droneId)) grp.remove();
}
