/* The drone markers: an arrow in the drone's colour turned to its heading, a fuel ring
 * (green, orange under a quarter, red when the fuel margin is negative) and a label with the
 * fuel and margin. Moved on every telemetry frame; rebuilt only when the map's scale changes. */

import { $, el, flippedText } from "./dom.js";
import { label } from "./format.js";
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

/** Place every drone of the scene at its latest telemetry; forget the ones gone. */
export function renderDrones() {
  const scene = state.scene;
  if (!scene) return;
  const g = $("#l-drones");
  const u = state.unit;
  const tel = (state.telemetry && state.telemetry.drones) || {};
  const seen = new Set();
  for (const [id, d] of Object.entries(scene.drones || {})) {
    seen.add(id);
    const live = tel[id] || {};
    const x = live.x ?? d.x, y = live.y ?? d.y, heading = live.heading ?? d.heading ?? 0;
    const fuel = live.fuel ?? d.fuel, status = live.status || d.status;
    let grp = g.querySelector(`g.drone[data-drone-id="${CSS.escape(id)}"]`);
    if (!grp || grp.dataset.unit !== String(u)) {
      if (grp) grp.remove();
      grp = el("g", { class: "drone", "data-drone-id": id, "data-unit": String(u) }, g);
      el("circle", { class: "ring-bg", r: u * 2.1, "vector-effect": "non-scaling-stroke", "stroke-width": 3 }, grp);
      el("path", { class: "ring", "vector-effect": "non-scaling-stroke", "stroke-width": 3 }, grp);
      const body = el("g", { class: "body" }, grp);
      el("polygon", { points: `${1.7 * u},0 ${-1.1 * u},${1.0 * u} ${-0.5 * u},0 ${-1.1 * u},${-1.0 * u}`,
                      fill: droneColour(id), "vector-effect": "non-scaling-stroke", "stroke-width": 1 }, body);
      flippedText(grp, u * 2.4, -u * 1.6, label(id), u * 1.25, { class: "dlabel" });
    }
    grp.setAttribute("transform", `translate(${x},${y})`);
    grp.dataset.x = x; grp.dataset.y = y; grp.dataset.status = status;
    grp.querySelector("g.body").setAttribute("transform", `rotate(${heading * 180 / Math.PI})`);
    grp.classList.toggle("lost", status === "lost");
    grp.classList.toggle("landed", status === "landed");
    const frac = d.budget > 0 ? fuel / d.budget : 0;
    const ring = grp.querySelector("path.ring");
    ring.setAttribute("d", ringPath(u * 2.1, frac));
    const margin = d.margin_km;
    ring.setAttribute("stroke", margin !== null && margin !== undefined && margin < 0 ? "#ef5350"
                                : frac < 0.25 ? "#ffa726" : "#66bb6a");
    grp.querySelector("text.dlabel").textContent =
      `${label(id)} ${Math.round(fuel)} km` + (margin !== null && margin !== undefined ? ` (${margin >= 0 ? "+" : ""}${Math.round(margin)})` : "");
  }
  for (const grp of [...g.children]) if (!seen.has(grp.dataset.droneId)) grp.remove();
}
