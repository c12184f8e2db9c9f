/* The map at swarm size. Above SVG_MAX_DRONES drones or SVG_MAX_TARGETS targets the drones,
 * the targets and the drones' paths are drawn on two canvases over the SVG map instead of
 * one SVG element each (thousands of elements restyled on every frame cannot hold the frame
 * rate): "#swarm-under" (targets and paths) is redrawn with the scene and the view, and
 * "#swarm-over" (drones, their labels, the selected drone's paths) with every telemetry
 * frame. The SVG keeps the grid, SAMs, airports, the draft, the selection ring and the
 * replay's marks. A smaller mission is drawn in SVG only: each marker an element the browser
 * tests and assistive tools can find (g.drone[data-drone-id], g.target[data-target-id]).
 *
 * Level of detail, from what is in view: each drone's fuel ring and label, each target's
 * letter and id, and every drone's paths only when few are in view (zoomed in) or when the
 * Layers box's "all paths" is on; otherwise small markers, and the paths and label of the
 * selected drone only. A click finds the nearest drone (else target) under the pointer
 * (``hitAt``), so selection and the edit tools work as on the SVG. */

import { $ } from "./dom.js";
import { droneShown, layerOn } from "./layers.js";
import { state } from "./store.js";

export const SVG_MAX_DRONES = 50;
export const SVG_MAX_TARGETS = 500;
const UNIT_PX = 8.5; // px per marker unit (viewport.js)
const DETAIL_DRONES = 60; // drones in view at or under which each gets its ring, label and paths
const DETAIL_TARGETS = 150; // targets in view at or under which each gets its letter and id
const DENSE_TARGETS = 1000; // more in view: dots without an outline
const HIT_PX = 10;

/** Whether a scene is drawn on the canvases (a swarm) or in SVG. */
export function swarmMode(scene) {
  if (!scene) return false;
  return Object.keys(scene.drones || {}).length > SVG_MAX_DRONES || (scene.targets || []).length > SVG_MAX_TARGETS;
}

let colours = null;
function colour(name) {
  if (!colours) {
    const css = getComputedStyle(document.documentElement);
    colours = Object.fromEntries(["pending", "planned", "collected", "excluded"].map(
      (k) => [k, css.getPropertyValue("--" + k).trim() || "#90a4ae"]));
  }
  return colours[name] || colours.pending;
}

function canvas(id) {
  let c = document.getElementById(id);
  if (!c) {
    c = document.createElement("canvas");
    c.id = id;
    c.className = "swarm-canvas";
    c.setAttribute("aria-hidden", "true");
    const map = $("#map");
    map.parentNode.insertBefore(c, id === "swarm-under" ? map.nextSibling : (document.getElementById("swarm-under") || map).nextSibling);
  }
  return c;
}

/** The canvas sized to the map (device pixels), cleared, drawing in CSS pixels. */
function context(id) {
  const c = canvas(id);
  const map = $("#map");
  const w = map.clientWidth, h = map.clientHeight, dpr = window.devicePixelRatio || 1;
  if (c.width !== Math.round(w * dpr) || c.height !== Math.round(h * dpr)) {
    c.width = Math.round(w * dpr); c.height = Math.round(h * dpr);
    c.style.width = w + "px"; c.style.height = h + "px";
  }
  c.hidden = false;
  const ctx = c.getContext("2d");
  ctx.setTransform(dpr, 0, 0, dpr, 0, 0);
  ctx.clearRect(0, 0, w, h);
  return { ctx, w, h };
}

/** km (y up) to the canvas's pixels: the SVG's own transform, so both always agree. */
function projection(w, h) {
  const m = $("#world").getScreenCTM();
  if (!m) return null;
  const r = $("#map").getBoundingClientRect();
  const sx = m.a, sy = m.d, ox = m.e - r.left, oy = m.f - r.top;
  return { x: (x) => sx * x + ox, y: (y) => sy * y + oy, in: (px, py, pad) => px >= -pad && py >= -pad && px <= w + pad && py <= h + pad };
}

/** Hide both canvases (a small mission: SVG only). */
export function clearSwarm() {
  for (const id of ["swarm-under", "swarm-over"]) {
    const c = document.getElementById(id);
    if (c && !c.hidden) { c.getContext("2d").clearRect(0, 0, c.width, c.height); c.hidden = true; }
  }
  drawn.drones = []; drawn.targets = [];
}

/** What the last frames drew, in canvas pixels, for hitAt. */
const drawn = { drones: [], targets: [] };

function polyline(ctx, p, poly) {
  ctx.beginPath();
  for (let i = 0; i < poly.length; i++) {
    const x = p.x(poly[i][0]), y = p.y(poly[i][1]);
    if (i) ctx.lineTo(x, y); else ctx.moveTo(x, y);
  }
  ctx.stroke();
}

const PATH_STYLE = { flown: [1.2, [], 0.7], frozen: [5, [], 0.85], planned: [2, [7, 5], 0.95] };

function drawPaths(ctx, p, d, col) {
  ctx.strokeStyle = col;
  for (const name of ["flown", "frozen", "planned"]) {
    const poly = d[name] || [];
    if (poly.length < 2 || !layerOn(name)) continue;
    const [width, dash, alpha] = PATH_STYLE[name];
    ctx.lineWidth = width; ctx.setLineDash(dash); ctx.globalAlpha = alpha;
    polyline(ctx, p, poly);
  }
  ctx.setLineDash([]); ctx.globalAlpha = 1;
}

function inViewCount(p, items, pad) {
  let n = 0;
  for (const o of items) if (p.in(p.x(o.x), p.y(o.y), pad)) n++;
  return n;
}

/** The targets and the drones' paths (with the scene, and when the view moves). */
export function drawSwarmStatics(scene, colourOf) {
  const { ctx, w, h } = context("swarm-under");
  const p = projection(w, h);
  drawn.targets = [];
  if (!p) return;
  const drones = Object.entries(scene.drones || {}).filter(([id]) => droneShown(id));
  const detail = layerOn("allpaths") || inViewCount(p, drones.map(([, d]) => d), 0) <= DETAIL_DRONES;
  if (detail) for (const [id, d] of drones) drawPaths(ctx, p, d, colourOf(id));
  const targets = scene.targets || [];
  const shown = inViewCount(p, targets, 20);
  const labels = layerOn("labels") && shown <= DETAIL_TARGETS;
  ctx.textAlign = "center"; ctx.textBaseline = "middle";
  for (const t of targets) {
    const x = p.x(t.x), y = p.y(t.y);
    if (!p.in(x, y, 20)) continue;
    const prio = Math.min(Math.max(t.priority, 0), 12);
    const r = shown > DENSE_TARGETS ? 1.5 + 0.15 * prio : (0.75 + 0.085 * prio) * UNIT_PX;
    drawn.targets.push({ id: t.id, x, y, r });
    ctx.beginPath();
    ctx.arc(x, y, r, 0, 2 * Math.PI);
    ctx.fillStyle = colour(t.status);
    ctx.fill();
    if (shown <= DENSE_TARGETS) { ctx.lineWidth = 1; ctx.strokeStyle = t.status === "excluded" ? "#90a4ae" : "#0b0e12"; ctx.stroke(); }
    if (!labels) continue;
    ctx.fillStyle = t.status === "excluded" || t.status === "collected" ? "#eceff1" : "#0b0e12";
    ctx.font = `700 ${Math.round(r * 1.05)}px sans-serif`;
    ctx.fillText(t.type || "", x, y + 0.5);
    ctx.fillStyle = "#9fb0bf";
    ctx.font = `${Math.round(1.1 * UNIT_PX)}px sans-serif`;
    ctx.textAlign = "left";
    ctx.fillText(t.id, x + r + 3, y - r * 0.6);
    ctx.textAlign = "center";
  }
}

/** A drone's fuel ring colour, as the SVG's (drones.js). */
function ringColour(status, margin, frac) {
  if (status === "landed") return "#78909c";
  if (margin !== null && margin !== undefined && margin < 0) return "#ef5350";
  return frac < 0.25 ? "#ffa726" : "#66bb6a";
}

/** The drones where the latest telemetry puts them (each frame): ``now`` gives a drone's
 * record, ``text`` its label. The selected drone's paths and label are always drawn. */
export function drawSwarmDrones(ids, now, colourOf, text) {
  const { ctx, w, h } = context("swarm-over");
  const p = projection(w, h);
  drawn.drones = [];
  if (!p) return;
  const sel = state.selected && state.selected.kind === "drone" ? state.selected.id : null;
  const list = [];
  for (const id of ids) {
    if (!droneShown(id)) continue;
    const d = now(id);
    if (!d) continue;
    const x = p.x(d.x), y = p.y(d.y);
    if (!p.in(x, y, 30)) continue;
    list.push([id, d, x, y]);
  }
  const detail = list.length <= DETAIL_DRONES;
  const u = detail ? UNIT_PX : UNIT_PX * 0.55;
  const labels = layerOn("labels");
  if (sel && !detail && !layerOn("allpaths")) {
    const d = now(sel);
    if (d && droneShown(sel)) drawPaths(ctx, p, d, colourOf(sel));
  }
  ctx.font = `600 ${Math.round(1.25 * UNIT_PX)}px sans-serif`;
  ctx.textAlign = "left"; ctx.textBaseline = "alphabetic";
  for (const [id, d, x, y] of list) {
    drawn.drones.push({ id, x, y });
    const status = d.status, lost = status === "lost";
    const frac = d.budget > 0 ? Math.min(Math.max(d.fuel / d.budget, 0), 1) : 0;
    if (detail && !lost) {
      ctx.lineWidth = 3;
      ctx.strokeStyle = "rgba(255, 255, 255, 0.12)";
      ctx.beginPath(); ctx.arc(x, y, 2.1 * u, 0, 2 * Math.PI); ctx.stroke();
      ctx.strokeStyle = ringColour(status, d.margin_km, frac);
      ctx.beginPath(); ctx.arc(x, y, 2.1 * u, 0, -frac * 2 * Math.PI, true); ctx.stroke();
    }
    const a = -(d.heading ?? 0), c = Math.cos(a), s = Math.sin(a);
    const pt = (ax, ay) => [x + (ax * c - ay * s) * u, y + (ax * s + ay * c) * u];
    ctx.beginPath();
    ctx.moveTo(...pt(1.7, 0)); ctx.lineTo(...pt(-1.1, 1.0)); ctx.lineTo(...pt(-0.5, 0)); ctx.lineTo(...pt(-1.1, -1.0));
    ctx.closePath();
    ctx.globalAlpha = lost ? 0.6 : status === "landed" ? 0.5 : 1;
    ctx.fillStyle = lost ? "#546e7a" : colourOf(id);
    ctx.fill();
    ctx.globalAlpha = 1;
    if (detail) { ctx.lineWidth = 1; ctx.strokeStyle = "#0b0e12"; ctx.stroke(); }
    if (lost) {
      const k = 1.6 * u;
      ctx.strokeStyle = "#ef5350"; ctx.lineWidth = 2.5;
      ctx.beginPath(); ctx.moveTo(x - k, y - k); ctx.lineTo(x + k, y + k); ctx.moveTo(x - k, y + k); ctx.lineTo(x + k, y - k); ctx.stroke();
    }
    if (labels && (detail || id === sel)) {
      ctx.fillStyle = "#cfd8dc";
      ctx.fillText(text(id, d), x + 2.4 * UNIT_PX, y - 0.6 * UNIT_PX);
    }
  }
}

/** The drone (else the target) drawn under a screen point, or null. */
export function hitAt(clientX, clientY) {
  const c = document.getElementById("swarm-over");
  if (!c || c.hidden) return null;
  const r = c.getBoundingClientRect();
  const x = clientX - r.left, y = clientY - r.top;
  let best = null, bestD = HIT_PX;
  for (const d of drawn.drones) {
    const dist = Math.hypot(d.x - x, d.y - y);
    if (dist <= bestD) { best = { kind: "drone", id: d.id }; bestD = dist; }
  }
  if (best) return best;
  for (const t of drawn.targets) {
    const dist = Math.hypot(t.x - x, t.y - y);
    if (dist <= Math.max(t.r + 2, 5) && dist <= bestD + t.r) { best = { kind: "target", id: t.id }; bestD = dist - t.r; }
  }
  return best;
}
