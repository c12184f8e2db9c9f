/* The map's viewport, as in QGroundControl or Foxglove: the wheel zooms about the cursor, a
 * drag on the map pans it (not while an edit tool drags a target or a SAM), the Fit button
 * (or F) goes back to the whole mission and follows it again, + and - zoom about the
 * centre. A scale bar and the cursor's coordinates (km east and north, and latitude and
 * longitude when the scene has a geographic origin, scene.geo = {lat0, lon0}) sit on the
 * map.
 *
 * The view is a box in km, y up (V.view: x, y the south-west corner, w, h): the SVG's
 * viewBox. While V.auto, the view is the mission's fitted box (map.js fits it to each
 * scene); a zoom or a pan leaves the mission where the operator put it until Fit. Markers
 * and labels keep their size on the screen: state.unit follows the view's span. */

import { $, el } from "./dom.js";
import { schedule, state } from "./store.js";

const WGS84_A = 6378.137; // km, the WGS 84 semi-major axis
const WGS84_E2 = 0.00669437999014; // its first eccentricity squared
const MIN_SPAN_KM = 0.2;
const PAN_START_PX = 6; // a smaller move is a click (the edit tools use the same slack)
const BAR_PX = 110; // the scale bar's longest length

/** The viewport's state (window.isr.viewport in the page). */
export const V = { fit: null, view: null, auto: true, panning: null };

/** Screen pixels per marker unit: a label of 1.25 units is about 11 px, whatever the size
 * of the window or the zoom. */
const UNIT_PX = 8.5;

/** km per marker unit for a view on the map as it is laid out now: markers and labels keep
 * their size on the screen (the viewBox is fitted, "meet", into the map's box). */
function unitOf(box) {
  const r = $("#map").getBoundingClientRect();
  const scale = Math.min(r.width / box.w, r.height / box.h); // px per km
  return scale > 0 && Number.isFinite(scale) ? UNIT_PX / scale : Math.max(box.w, box.h) / 90;
}

function apply() {
  const b = V.view;
  $("#map").setAttribute("viewBox", `${b.x} ${-(b.y + b.h)} ${b.w} ${b.h}`);
  state.unit = unitOf(b);
  state.sceneDirty = true;
  schedule();
}

/** The map's box changed (the window, a splitter, a panel folded): the unit follows. */
export function mapResized() {
  if (!V.view) return;
  const u = unitOf(V.view);
  if (Math.abs(u - state.unit) > 1e-9 * Math.max(1, u)) apply();
}

/** The mission's fitted box (map.js, from each scene): the view too while following it. */
export function setFit(box) {
  V.fit = box;
  if (V.auto || !V.view) { V.view = { ...box }; apply(); }
}

/** Back to the whole mission, following it again. */
export function fitView() {
  V.auto = true;
  if (V.fit) { V.view = { ...V.fit }; apply(); }
}

/** The world point (km, y up) under a screen point. */
export function toWorld(clientX, clientY) {
  const m = $("#world").getScreenCTM();
  if (!m) return null;
  const p = new DOMPoint(clientX, clientY).matrixTransform(m.inverse());
  return { x: p.x, y: p.y };
}

/** What the map shows now (the view and the letterbox around it), in km. */
export function visibleBox() {
  const r = $("#map").getBoundingClientRect();
  const a = toWorld(r.left, r.bottom), b = toWorld(r.right, r.top);
  if (!a || !b || !(b.x > a.x) || !(b.y > a.y)) return V.view;
  return { x: a.x, y: a.y, w: b.x - a.x, h: b.y - a.y };
}

/** Zoom by factor f (below 1: in) keeping the world point under (clientX, clientY) still. */
export function zoomAt(clientX, clientY, f) {
  if (!V.view) return;
  const p = toWorld(clientX, clientY);
  if (!p) return;
  const b = V.view;
  const span = V.fit ? Math.max(V.fit.w, V.fit.h) : Math.max(b.w, b.h);
  f = Math.min(Math.max(f, MIN_SPAN_KM / Math.max(b.w, b.h)), (20 * span) / Math.max(b.w, b.h));
  V.view = { x: p.x - (p.x - b.x) * f, y: p.y - (p.y - b.y) * f, w: b.w * f, h: b.h * f };
  V.auto = false;
  apply();
}

/** Zoom about the map's centre. */
export function zoomCentre(f) {
  const r = $("#map").getBoundingClientRect();
  zoomAt(r.left + r.width / 2, r.top + r.height / 2, f);
}

/** Centre the view on a point (km), keeping the zoom; a ring marks the point briefly. */
export function centreOn(x, y) {
  if (!V.view || !Number.isFinite(x) || !Number.isFinite(y)) return;
  const b = V.view;
  V.view = { x: x - b.w / 2, y: y - b.h / 2, w: b.w, h: b.h };
  V.auto = false;
  apply();
  mark(x, y);
}

function mark(x, y) {
  let g = $("#l-focus");
  if (!g) g = el("g", { id: "l-focus", class: "focus" }, $("#world"));
  g.replaceChildren();
  el("circle", { cx: x, cy: y, r: state.unit * 3.2, "vector-effect": "non-scaling-stroke" }, g);
  clearTimeout(mark.timer);
  mark.timer = setTimeout(() => g.replaceChildren(), 2500);
}

// ----- the scale bar and the cursor's coordinates ------------------------------------------

function niceKm(km) {
  const p = 10 ** Math.floor(Math.log10(km));
  for (const m of [5, 2, 1]) if (m * p <= km) return m * p;
  return p;
}

/** The scale bar for the current zoom (a round length at most BAR_PX long). */
export function renderScale() {
  const m = $("#world").getScreenCTM();
  const bar = $("#scale-bar");
  if (!m || !bar || !(m.a > 0)) return;
  const km = niceKm(BAR_PX / m.a);
  bar.querySelector(".bar").style.width = `${(km * m.a).toFixed(1)}px`;
  const text = km >= 1 ? `${km} km` : `${Math.round(km * 1000)} m`;
  bar.querySelector(".len").textContent = text;
  bar.dataset.km = String(km);
  bar.dataset.px = (km * m.a).toFixed(2);
}

/** Latitude and longitude (degrees) of a point x km east, y km north of the origin: the
 * inverse of the azimuthal equidistant projection the planner uses (planner/geo.py, PROJ's
 * aeqd on WGS 84), on a sphere whose north and east scales are WGS 84's radii of curvature
 * at the origin: within metres of PROJ over a mission's tens of km. */
export function toLatLon(x, y, geo) {
  const rad = Math.PI / 180;
  const phi0 = geo.lat0 * rad, s = Math.sin(phi0);
  const w = Math.sqrt(1 - WGS84_E2 * s * s);
  const north = (WGS84_A * (1 - WGS84_E2)) / (w * w * w), east = WGS84_A / w; // M, N
  const xs = x / east, ys = y / north; // angles on the unit sphere
  const rho = Math.hypot(xs, ys);
  if (rho < 1e-15) return { lat: geo.lat0, lon: geo.lon0 };
  const az = Math.atan2(xs, ys);
  const lat = Math.asin(s * Math.cos(rho) + Math.cos(phi0) * Math.sin(rho) * Math.cos(az));
  const lon = Math.atan2(Math.sin(az) * Math.sin(rho) * Math.cos(phi0), Math.cos(rho) - s * Math.sin(lat));
  return { lat: lat / rad, lon: ((geo.lon0 + lon / rad + 540) % 360) - 180 };
}

const hemi = (v, pos, neg) => `${Math.abs(v).toFixed(5)}° ${v >= 0 ? pos : neg}`;

function showCursor(p) {
  const box = $("#cursor-pos");
  if (!box) return;
  if (!p) { box.textContent = "x – y – km"; delete box.dataset.x; delete box.dataset.y; return; }
  let text = `x ${p.x.toFixed(2)} y ${p.y.toFixed(2)} km`;
  const geo = state.scene && state.scene.geo;
  if (geo && Number.isFinite(geo.lat0) && Number.isFinite(geo.lon0)) {
    const ll = toLatLon(p.x, p.y, geo);
    text += ` · ${hemi(ll.lat, "N", "S")} ${hemi(ll.lon, "E", "W")}`;
    box.dataset.lat = ll.lat.toFixed(6); box.dataset.lon = ll.lon.toFixed(6);
  }
  box.textContent = text;
  box.dataset.x = p.x.toFixed(3); box.dataset.y = p.y.toFixed(3);
}

// ----- the pointer -------------------------------------------------------------------------

/** The wheel, the drag, the buttons and the keys (after tools.js: its drags win). */
export function initViewport() {
  const svg = $("#map");
  window.isr.viewport = V;
  svg.addEventListener("wheel", (ev) => {
    ev.preventDefault();
    const lines = ev.deltaMode === 1 ? 16 : ev.deltaMode === 2 ? 400 : 1;
    zoomAt(ev.clientX, ev.clientY, Math.exp(ev.deltaY * lines * 0.0015));
  }, { passive: false });
  svg.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0 && ev.button !== 1) return;
    if (state.dragging || !V.view) return; // the move tool took it
    V.panning = { id: ev.pointerId, x: ev.clientX, y: ev.clientY, view: { ...V.view },
                  scale: ($("#world").getScreenCTM() || { a: 1 }).a, moved: false };
  });
  svg.addEventListener("pointermove", (ev) => {
    const p = toWorld(ev.clientX, ev.clientY);
    showCursor(p);
    const pan = V.panning;
    if (!pan || pan.id !== ev.pointerId) return;
    if (state.dragging) { V.panning = null; return; }
    const dx = ev.clientX - pan.x, dy = ev.clientY - pan.y;
    if (!pan.moved && Math.hypot(dx, dy) < PAN_START_PX) return;
    if (!pan.moved) { pan.moved = true; svg.classList.add("panning"); svg.setPointerCapture(ev.pointerId); }
    V.view = { ...pan.view, x: pan.view.x - dx / pan.scale, y: pan.view.y + dy / pan.scale };
    V.auto = false;
    apply();
  });
  const stop = (ev) => {
    if (V.panning && V.panning.id === ev.pointerId) {
      if (V.panning.moved) try { svg.releasePointerCapture(ev.pointerId); } catch (_) { /* gone */ }
      V.panning = null;
      svg.classList.remove("panning");
    }
  };
  svg.addEventListener("pointerup", stop);
  svg.addEventListener("pointercancel", stop);
  svg.addEventListener("pointerleave", () => { if (!V.panning) showCursor(null); });
  $("#btn-fit").addEventListener("click", () => fitView());
  $("#btn-zoom-in").addEventListener("click", () => zoomCentre(1 / 1.5));
  $("#btn-zoom-out").addEventListener("click", () => zoomCentre(1.5));
  document.addEventListener("keydown", (ev) => {
    const t = ev.target;
    if (ev.ctrlKey || ev.metaKey || ev.altKey) return;
    if (t && (["INPUT", "SELECT", "TEXTAREA"].includes(t.tagName) || t.isContentEditable)) return;
    if (ev.key === "f" || ev.key === "F") fitView();
    else if (ev.key === "+" || ev.key === "=") zoomCentre(1 / 1.5);
    else if (ev.key === "-") zoomCentre(1.5);
  });
  window.addEventListener("resize", () => { state.sceneDirty = true; schedule(); });
  new ResizeObserver(() => mapResized()).observe(svg);
  showCursor(null);
}
