/* The selection: one drone, target, SAM or airport, picked by a click on the map (the select
 * tool), a fleet row or the inspector; Esc (or the inspector's ×) clears it. It is ringed on
 * the map (#l-select, over everything; the ring follows a drone on every frame) and shown in
 * the inspector (inspector.js). state.selected = {kind, id} or null. */

import { $, el } from "./dom.js";
import { droneNow } from "./drones.js";
import { schedule, state } from "./store.js";

/** Select an entity ({kind: "drone" | "target" | "sam" | "airport", id}) or nothing (null). */
export function select(what) {
  state.selected = what ? { kind: what.kind, id: String(what.id) } : null;
  state.inspectorDirty = true;
  renderSelection();
  schedule();
}

/** Where the selected entity is now (km) and how big a ring it needs, or null when it is gone. */
export function selectedPlace() {
  const sel = state.selected, scene = state.scene;
  if (!sel || !scene) return null;
  const u = state.unit;
  const find = (list) => (list || []).find((o) => o.id === sel.id);
  if (sel.kind === "drone") {
    const d = droneNow(sel.id);
    return d ? { x: d.x, y: d.y, r: u * 3.0 } : null;
  }
  if (sel.kind === "target") {
    const t = find(scene.targets);
    return t ? { x: t.x, y: t.y, r: u * (1.2 + 0.085 * Math.min(Math.max(t.priority, 0), 12)) } : null;
  }
  if (sel.kind === "sam") {
    const s = find(scene.sams);
    return s ? { x: s.x, y: s.y, r: u * 1.2, zone: s.range } : null;
  }
  const a = find(scene.airports);
  return a ? { x: a.x, y: a.y, r: u * 1.7 } : null;
}

function layer() {
  let g = document.getElementById("l-select");
  if (!g) g = el("g", { id: "l-select", class: "sel-ring" }, $("#world"));
  return g;
}

/** Ring the selection where it is now (each frame); nothing when nothing is selected. */
export function renderSelection() {
  const g = layer();
  const p = selectedPlace();
  if (!p) { if (g.childElementCount) g.replaceChildren(); g.removeAttribute("data-kind"); return; }
  g.dataset.kind = state.selected.kind;
  g.dataset.id = state.selected.id;
  if (g.childElementCount !== (p.zone ? 3 : 2) || g.dataset.unit !== String(state.unit)) {
    g.replaceChildren();
    g.dataset.unit = String(state.unit);
    el("circle", { class: "halo", "vector-effect": "non-scaling-stroke" }, g);
    el("circle", { class: "ring", "vector-effect": "non-scaling-stroke" }, g);
    if (p.zone) el("circle", { class: "zone", "vector-effect": "non-scaling-stroke" }, g);
  }
  const [halo, ring, zone] = g.children;
  for (const c of [halo, ring]) { c.setAttribute("cx", p.x); c.setAttribute("cy", p.y); c.setAttribute("r", p.r); }
  if (zone) { zone.setAttribute("cx", p.x); zone.setAttribute("cy", p.y); zone.setAttribute("r", p.zone); }
}

/** Esc clears the selection (unless a field or a dialog has the keys). */
export function initSelection() {
  document.addEventListener("keydown", (ev) => {
    if (ev.key !== "Escape" || !state.selected) return;
    const t = ev.target;
    if (t && ["INPUT", "SELECT", "TEXTAREA"].includes(t.tagName)) return;
    if (document.querySelector("dialog[open]") || !$("#runs-panel").hidden) return;
    select(null);
  });
}
