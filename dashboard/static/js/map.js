/* The map: an SVG in km with y up (#world is flipped, scale(1,-1), inside a viewBox: the
 * view of viewport.js, fitted to the scene until the operator zooms or pans, so
 * #world.getScreenCTM() maps km to screen pixels). Layers, bottom to top: grid with its km
 * labels, SAMs (hidden ones with the truth switch), flown / frozen / planned paths (a
 * paused drone's path to resume included), the draft's paths, airports, targets (by
 * status), drones (drones.js), the selection (select.js). Redrawn from each scene, and when
 * the view changes. Every label (class "lbl") is placed clear of the others and of every
 * marker by one pass per frame (``layoutLabels``, labels.js); the layers switched off in the
 * Layers box (layers.js) are not drawn. An ended run's draft is not drawn: nothing waits for
 * review any more. A swarm's drones, targets and paths are drawn on canvases over the SVG
 * instead (swarm.js). */

import { $, el, flippedText, pts } from "./dom.js";
import { droneColour, renderDrones } from "./drones.js";
import { droneShown, layerOn } from "./layers.js";
import { measured, placeLabels } from "./labels.js";
import { runOver } from "./run_state.js";
import { schedule, state } from "./store.js";
import { clearSwarm, drawSwarmStatics, swarmMode } from "./swarm.js";
import { renderScale, setFit, visibleBox } from "./viewport.js";

// Label sizes, in marker units (viewport.js keeps a unit at a fixed number of pixels).
const SIZE = { drone: 1.25, airport: 1.3, sam: 1.2, target: 1.1 };

/** The static labels and markers of the last drawn scene (airports, SAMs, targets). */
const statics = { labels: [], obstacles: [] };
const slots = new Map(); // "kind:id" -> the place its label took last time

function fit(scene) {
  const xs = [], ys = [];
  const add = (x, y, r = 0) => { xs.push(x - r, x + r); ys.push(y - r, y + r); };
  (scene.airports || []).forEach((a) => add(a.x, a.y));
  (scene.targets || []).forEach((t) => add(t.x, t.y));
  (scene.sams || []).forEach((s) => { if (s.known || state.truth) add(s.x, s.y, s.range); });
  Object.values(scene.drones || {}).forEach((d) => add(d.x, d.y));
  if (!xs.length) return;
  let minx = Math.min(...xs), maxx = Math.max(...xs), miny = Math.min(...ys), maxy = Math.max(...ys);
  const span = Math.max(maxx - minx, maxy - miny, 10);
  const pad = span * 0.06;
  minx -= pad; maxx += pad; miny -= pad; maxy += pad;
  // Round outwards so small moves do not refit the map on every scene.
  const step = span / 20;
  minx = Math.floor(minx / step) * step; miny = Math.floor(miny / step) * step;
  maxx = Math.ceil(maxx / step) * step; maxy = Math.ceil(maxy / step) * step;
  const key = [minx, miny, maxx, maxy].map((v) => v.toFixed(3)).join(",");
  if (key === state.fitKey) return;
  state.fitKey = key;
  setFit({ x: minx, y: miny, w: maxx - minx, h: maxy - miny });
}

/** The grid over what the map shows, a line every round number of km, labelled along the
 * bottom and left edges (the axes: km east and north). */
function drawGrid(u) {
  const g = $("#l-grid");
  g.replaceChildren();
  g.setAttribute("class", "grid");
  const b = visibleBox();
  if (!b) return;
  const minx = b.x, miny = b.y, maxx = b.x + b.w, maxy = b.y + b.h;
  const span = Math.max(b.w, b.h);
  const step = [0.1, 0.2, 0.5, 1, 2, 5, 10, 20, 50, 100, 200, 500, 1000].find((s) => span / s <= 14) || 2000;
  const fmt = (v) => String(Math.round(v * 10) / 10);
  for (let x = Math.ceil(minx / step) * step; x <= maxx; x += step) {
    el("line", { x1: x, y1: miny, x2: x, y2: maxy, "vector-effect": "non-scaling-stroke" }, g);
    flippedText(g, x + u * 0.3, maxy - u * 1.3, fmt(x), u * 1.0, { class: "axis" });
  }
  for (let y = Math.ceil(miny / step) * step; y <= maxy; y += step) {
    el("line", { x1: minx, y1: y, x2: maxx, y2: y, "vector-effect": "non-scaling-stroke" }, g);
    flippedText(g, minx + u * 0.4, y + u * 0.3, fmt(y), u * 1.0, { class: "axis" });
  }
}

/** Draw the whole map for a scene (fitted to it first, unless the operator zoomed or
 * panned: then the view stays where it is). */
export function drawMap(scene) {
  fit(scene);
  const u = state.unit;
  statics.labels = []; statics.obstacles = [];
  const swarm = swarmMode(scene);
  drawGrid(u);
  renderSams(scene, u);
  renderPaths(swarm ? {} : scene);
  renderDraft(scene);
  renderAirports(scene, u);
  renderTargets(swarm ? {} : scene, u);
  if (swarm) drawSwarmStatics(scene, (id) => droneColour(id)); // targets and paths on a canvas
  else clearSwarm();
  if (state.mapDecorator) state.mapDecorator(); // another view's own marks (the compare's)
  renderDrones(); // places every label too (a swarm's drones have none in the SVG: here)
  if (swarm) layoutLabels([], []);
  renderScale();
}

function staticLabel(kind, id, textEl, x, y, gap) {
  statics.labels.push({ kind, id, textEl, x, y, gap, size: state.unit * SIZE[kind], text: textEl.textContent });
}

/** A label and its marker drawn by another module on this map (the compare's "only in B"
 * SAMs and targets): placed with the others from the next frame on. */
export function addMapLabel(kind, id, textEl, x, y, gap, markerRadius) {
  staticLabel(kind, id, textEl, x, y, gap);
  statics.obstacles.push(boxAround(x, y, markerRadius));
}

const boxAround = (x, y, r) => ({ x0: x - r, y0: y - r, x1: x + r, y1: y + r });

function renderSams(scene, u) {
  const g = $("#l-sams");
  g.replaceChildren();
  for (const s of scene.sams || []) {
    if (!s.known && !state.truth) continue;
    const grp = el("g", { class: "sam" + (s.known ? "" : " hidden"), "data-sam-id": s.id,
                          "data-known": s.known ? "1" : "0", transform: `translate(${s.x},${s.y})` }, g);
    el("circle", { class: "zone", r: s.range, "vector-effect": "non-scaling-stroke", "stroke-width": 1.5 }, grp);
    el("circle", { class: "centre", r: u * 0.35 }, grp);
    const t = flippedText(grp, u * 0.6, -u * 0.3, s.id + (s.known ? "" : " (hidden)"), u * SIZE.sam, { class: "lbl" });
    staticLabel("sam", s.id, t, s.x, s.y, u * 0.7);
    statics.obstacles.push(boxAround(s.x, s.y, u * 0.45));
  }
}

function renderPaths(scene) {
  const layers = { flown: $("#l-flown"), frozen: $("#l-frozen"), planned: $("#l-planned") };
  for (const [name, g] of Object.entries(layers)) {
    g.replaceChildren();
    g.setAttribute("class", name);
  }
  for (const [id, d] of Object.entries(scene.drones || {})) {
    if (!droneShown(id)) continue;
    const colour = droneColour(id);
    for (const name of ["flown", "frozen", "planned"]) {
      const poly = d[name] || [];
      if (poly.length < 2) continue;
      el("polyline", { points: pts(poly), stroke: colour, "data-drone-id": id,
                       "vector-effect": "non-scaling-stroke" }, layers[name]);
    }
  }
}

function renderDraft(scene) {
  const g = $("#l-draft");
  g.replaceChildren();
  g.setAttribute("class", "draft");
  const draft = scene.draft;
  if (!draft || runOver()) return;
  const changed = new Set(draft.changed || Object.keys(draft.routes || {}));
  for (const [id, r] of Object.entries(draft.routes || {})) {
    if ((r.path || []).length < 2 || !droneShown(id) || !changed.has(id)) continue;
    el("polyline", { points: pts(r.path), "data-drone-id": id, "vector-effect": "non-scaling-stroke" }, g);
  }
}

function renderAirports(scene, u) {
  const g = $("#l-airports");
  g.replaceChildren();
  for (const a of scene.airports || []) {
    const grp = el("g", { class: "airport", "data-airport-id": a.id, transform: `translate(${a.x},${a.y})` }, g);
    el("rect", { x: -u * 0.8, y: -u * 0.8, width: u * 1.6, height: u * 1.6, "vector-effect": "non-scaling-stroke" }, grp);
    const t = flippedText(grp, u * 1.1, -u * 0.9, a.id, u * SIZE.airport, { class: "lbl" });
    staticLabel("airport", a.id, t, a.x, a.y, u * 1.1);
    statics.obstacles.push(boxAround(a.x, a.y, u * 0.95));
  }
}

/** A target's circle radius (km) on the map: its priority makes it bigger. */
export function targetRadius(t, u) { return u * (0.75 + 0.085 * Math.min(Math.max(t.priority, 0), 12)); }

function renderTargets(scene, u) {
  const g = $("#l-targets");
  g.replaceChildren();
  for (const t of scene.targets || []) {
    const r = targetRadius(t, u);
    const grp = el("g", { class: `target ${t.status}`, "data-target-id": t.id, "data-status": t.status,
                          transform: `translate(${t.x},${t.y})` }, g);
    el("circle", { r, "vector-effect": "non-scaling-stroke", "stroke-width": 1 }, grp);
    flippedText(grp, 0, -r * 0.38, t.type, r * 1.05, { "text-anchor": "middle" });
    const lbl = flippedText(grp, r + u * 0.25, -r * 0.1 - u * 0.9, t.id, u * SIZE.target, { class: "tid lbl" });
    staticLabel("target", t.id, lbl, t.x, t.y, r + u * 0.3);
    statics.obstacles.push(boxAround(t.x, t.y, r + u * 0.1));
  }
}

/** Place every label of the map clear of the others and of every marker: the drones'
 * (``drones``: [{id, textEl, x, y, text}], always shown) first, then the airports', SAMs' and
 * targets' (hidden when no clear place is left, or when off the view); ``markers`` are the
 * drones' boxes. Called once per frame by renderDrones, after the drones moved. */
export function layoutLabels(drones, markers) {
  if (!layerOn("labels")) return; // hidden by the Layers box: nothing to place
  const u = state.unit;
  const view = visibleBox();
  const inView = (x, y) => !view || (x >= view.x && x <= view.x + view.w && y >= view.y && y <= view.y + view.h);
  const items = [];
  for (const d of drones) items.push({ kind: "drone", id: d.id, textEl: d.textEl, x: d.x, y: d.y, text: d.text,
                                       size: u * SIZE.drone, gap: u * 2.5, keep: true });
  const order = { airport: 0, sam: 1, target: 2 };
  const rest = statics.labels.filter((l) => l.textEl.isConnected)
    .sort((a, b) => order[a.kind] - order[b.kind]);
  for (const l of rest) {
    if (!inView(l.x, l.y)) { l.textEl.classList.add("lbl-off"); continue; }
    items.push(l);
  }
  for (const it of items) {
    it.textEl.classList.remove("lbl-off");
    it.width = measured(it.textEl);
    it.slot = slots.get(it.kind + ":" + it.id);
  }
  const places = placeLabels(items, [...statics.obstacles, ...markers]);
  items.forEach((it, i) => {
    const p = places[i];
    if (p.hidden) { it.textEl.classList.add("lbl-off"); slots.delete(it.kind + ":" + it.id); return; }
    it.textEl.setAttribute("x", p.x);
    it.textEl.setAttribute("y", -p.y);
    slots.set(it.kind + ":" + it.id, p.slot);
  });
}

/** The truth switch: hidden SAMs shown (and the map fitted to them) or not. */
export function initTruthToggle() {
  $("#truth").addEventListener("change", (ev) => {
    state.truth = ev.target.checked; state.fitKey = ""; state.sceneDirty = true; schedule();
  });
  setTruthAvailable(false);
}

/** Whether the stream carries the ground truth (the token, or a dashboard showing it to
 * all): the switch works only then. */
export function setTruthAvailable(available) {
  const box = $("#truth");
  box.disabled = !available;
  box.closest("label").title = available
    ? "show the hidden SAMs (ground truth)"
    : "the ground truth needs the control token (enter it at the top right)";
  if (!available && box.checked) {
    box.checked = false;
    state.truth = false; state.fitKey = ""; state.sceneDirty = true; schedule();
  }
}
