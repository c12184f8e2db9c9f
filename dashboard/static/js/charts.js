/* The replay's charts under the map, plain SVG in screen pixels (redrawn when resized): points
 * collected and planned over time, fuel per drone (the drones' colours) with the policy's
 * reserve, and each planning round's latency (a bar at its tick; failed rounds red). Each has
 * its axes labelled in their units (points, km, ms; mission time m:ss) with round ticks, and a
 * playhead line in step with the bar. The pointer over a chart shows the values at that
 * moment (a line and a tip: every series, the nearest round); the wheel zooms the time axis
 * about the pointer, a drag selects a span to zoom to, a double click (or the "zoomed" tag)
 * shows the whole run again: the three charts share one time axis. A click seeks to its
 * tick. The data is /api/runs/{id}/series (state.replay.series). */

import { $, el } from "./dom.js";
import { droneColour } from "./drones.js";
import { fmtTime, label } from "./format.js";
import { R, seek } from "./replay.js";

const PAD = { left: 46, right: 10, top: 8, bottom: 24 };
const CHARTS = ["#ch-points", "#ch-fuel", "#ch-latency"];
const UNITS = { "#ch-points": "points", "#ch-fuel": "km", "#ch-latency": "ms" };
const DRAG_PX = 5;
let observer = null;

/** The time span shown (ticks), shared by the charts (window.isr.replay.chartSpan). */
const Z = { from: 0, to: null };
const spanTo = () => (Z.to === null ? Math.max(1, R.lastTick) : Z.to);

function frameOf(svg) {
  const w = Math.max(80, svg.clientWidth), h = Math.max(50, svg.clientHeight);
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  const from = Z.from, to = spanTo();
  const x = (tick) => PAD.left + ((w - PAD.left - PAD.right) * (tick - from)) / Math.max(1, to - from);
  const tickAt = (px) => from + ((px - PAD.left) / Math.max(1, w - PAD.left - PAD.right)) * (to - from);
  return { w, h, x, tickAt, from, to };
}

/** Round steps for an axis from 0 to max: about n of them. */
function niceSteps(max, n = 3) {
  const raw = max / n;
  const p = 10 ** Math.floor(Math.log10(raw || 1));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * p).find((s) => s >= raw) || 10 * p;
  const out = [];
  for (let v = 0; v <= max * 1.0001; v += step) out.push(v);
  return out;
}

function yScale(h, max) {
  const top = max > 0 ? max * 1.08 : 1;
  return (v) => h - PAD.bottom - ((h - PAD.top - PAD.bottom) * v) / top;
}

const fmtNum = (v) => (Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 10) / 10).toString();

function text(svg, x, y, content, attrs) {
  const t = el("text", { x, y, ...attrs }, svg);
  t.textContent = content;
  return t;
}

/** The axes: y ticks with their values, the unit along the y axis, mission time along x. */
function axes(svg, f, y, max, unit) {
  el("line", { class: "axis", x1: PAD.left, y1: f.h - PAD.bottom, x2: f.w - PAD.right, y2: f.h - PAD.bottom }, svg);
  el("line", { class: "axis", x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: f.h - PAD.bottom }, svg);
  for (const v of niceSteps(max, f.h > 120 ? 4 : 2)) {
    text(svg, PAD.left - 4, y(v) + 3, fmtNum(v), { "text-anchor": "end", class: "ytick" });
    if (v > 0) el("line", { class: "grid", x1: PAD.left, x2: f.w - PAD.right, y1: y(v), y2: y(v) }, svg);
  }
  text(svg, 10, (PAD.top + f.h - PAD.bottom) / 2, unit, {
    class: "ylabel", "text-anchor": "middle", transform: `rotate(-90 10 ${(PAD.top + f.h - PAD.bottom) / 2})`,
  });
  // time ticks: round seconds, about one per 90 px
  const seconds = (f.to - f.from) / R.hz;
  const want = Math.max(1, Math.floor((f.w - PAD.left - PAD.right) / 90));
  const step = [1, 2, 5, 10, 15, 30, 60, 120, 300, 600, 900, 1800, 3600].find((s) => seconds / s <= want) || 7200;
  for (let s = Math.ceil(f.from / R.hz / step) * step; s * R.hz <= f.to; s += step) {
    const px = f.x(s * R.hz);
    el("line", { class: "axis", x1: px, x2: px, y1: f.h - PAD.bottom, y2: f.h - PAD.bottom + 3 }, svg);
    text(svg, px, f.h - PAD.bottom + 12, fmtTime(s), { "text-anchor": "middle", class: "xtick" });
  }
  text(svg, f.w - PAD.right, f.h - 2, "mission time (m:ss)", { "text-anchor": "end", class: "xlabel" });
}

function line(svg, ticks, values, f, y, attrs) {
  if (!ticks.length) return null;
  let d = "";
  ticks.forEach((t, i) => {
    const v = values[i];
    if (v === null || v === undefined || t < f.from - 1 || t > f.to + 1) return;
    d += (d ? " L " : "M ") + f.x(t).toFixed(1) + " " + y(v).toFixed(1);
  });
  return d ? el("path", { d, ...attrs }, svg) : null;
}

function playhead(svg, f) {
  const g = el("line", { class: "playhead", x1: 0, x2: 0, y1: PAD.top, y2: f.h - PAD.bottom }, svg);
  svg._f = f;
  return g;
}

/** Draw the three charts from the run's series (again on resize and zoom). */
export function drawCharts() {
  const s = R.series;
  for (const sel of CHARTS) $(sel).replaceChildren();
  if (!observer) {
    observer = new ResizeObserver(() => { if (R.series) { drawCharts(); renderChartHeads(R.tick); } });
    for (const sel of CHARTS) observer.observe($(sel));
  }
  renderZoomTag();
  if (!s) return;
  const ticks = s.ticks || [];

  // points collected and planned
  let svg = $("#ch-points"), f = frameOf(svg);
  let max = Math.max(1, ...(s.collected || []), ...(s.planned || []).filter((v) => v !== null));
  let y = yScale(f.h, max);
  axes(svg, f, y, max, UNITS["#ch-points"]);
  line(svg, ticks, s.planned || [], f, y, { class: "series planned-s", "data-series": "planned" });
  line(svg, ticks, s.collected || [], f, y, { class: "series collected", "data-series": "collected" });
  playhead(svg, f);

  // fuel per drone, and the reserve
  svg = $("#ch-fuel"); f = frameOf(svg);
  const fuel = s.fuel || {};
  max = Math.max(1, ...Object.values(fuel).flat().filter((v) => v !== null));
  y = yScale(f.h, max);
  axes(svg, f, y, max, UNITS["#ch-fuel"]);
  if (s.reserve !== null && s.reserve !== undefined) {
    el("line", { class: "reserve", x1: PAD.left, x2: f.w - PAD.right, y1: y(s.reserve), y2: y(s.reserve) }, svg)
      .appendChild(document.createElementNS("http://www.w3.org/2000/svg", "title")).textContent = `reserve ${s.reserve} km`;
  }
  for (const [id, values] of Object.entries(fuel)) {
    const p = line(svg, ticks, values, f, y, { class: "series fuel", stroke: droneColour(id, Object.keys(fuel)), "data-series": "fuel-" + id });
    if (p) el("title", {}, p).textContent = label(id);
  }
  playhead(svg, f);

  // replan latency per round
  svg = $("#ch-latency"); f = frameOf(svg);
  const rounds = s.rounds || [];
  max = Math.max(1, ...rounds.map((r) => r.latency_ms || 0));
  y = yScale(f.h, max);
  axes(svg, f, y, max, UNITS["#ch-latency"]);
  for (const r of rounds) {
    if (r.latency_ms === null || r.latency_ms === undefined || r.tick < f.from || r.tick > f.to) continue;
    const bar = el("rect", {
      class: "bar" + (["rejected", "failed", "stale"].includes(r.status) ? " failed" : ""),
      x: f.x(r.tick) - 2, width: 4, y: y(r.latency_ms), height: Math.max(1, y(0) - y(r.latency_ms)),
      "data-tick": r.tick,
    }, svg);
    el("title", {}, bar).textContent = `tick ${r.tick}: ${Math.round(r.latency_ms)} ms, ${r.status} (${r.trigger || "–"})`;
  }
  // a path through the rounds too, so that the chart reads as a series
  line(svg, rounds.map((r) => r.tick), rounds.map((r) => r.latency_ms), f, y,
       { class: "series latency", stroke: "#81d4fa", "stroke-opacity": 0.5, "data-series": "latency" });
  playhead(svg, f);
}

/** Move the playhead line of every chart. */
export function renderChartHeads(tick) {
  for (const sel of CHARTS) {
    const svg = $(sel);
    const head = svg.querySelector("line.playhead");
    if (!head || !svg._f) continue;
    const f = svg._f;
    const x = f.x(tick);
    const shown = tick >= f.from && tick <= f.to;
    head.setAttribute("x1", x.toFixed(1));
    head.setAttribute("x2", x.toFixed(1));
    head.setAttribute("visibility", shown ? "visible" : "hidden");
  }
}

// ----- hover values ---------------------------------------------------------------------------

/** The series' values at a tick: the stored sample at or before it. */
function sampleAt(tick) {
  const s = R.series || {};
  const ticks = s.ticks || [];
  let lo = 0, hi = ticks.length - 1, at = -1;
  while (lo <= hi) { const mid = (lo + hi) >> 1; if (ticks[mid] <= tick) { at = mid; lo = mid + 1; } else hi = mid - 1; }
  return at;
}

/** The lines of the tip for a chart at a tick: [[colour or null, text]]. */
export function hoverValues(sel, tick) {
  const s = R.series || {};
  const i = sampleAt(tick);
  const rows = [[null, `${fmtTime(tick / R.hz)} (tick ${Math.round(tick)})`]];
  const v = (list) => (i >= 0 && list && list[i] !== null && list[i] !== undefined ? list[i] : null);
  if (sel === "#ch-points") {
    rows.push(["var(--collected)", `collected ${fmtNum(v(s.collected) ?? 0)} points`]);
    const planned = v(s.planned);
    rows.push(["var(--planned)", `planned ${planned === null ? "–" : fmtNum(planned)} points`]);
  } else if (sel === "#ch-fuel") {
    const fuel = s.fuel || {};
    for (const [id, values] of Object.entries(fuel)) {
      const f = v(values);
      rows.push([droneColour(id, Object.keys(fuel)), `${label(id)} ${f === null ? "–" : fmtNum(f) + " km"}`]);
    }
    if (s.reserve !== null && s.reserve !== undefined) rows.push(["var(--warn)", `reserve ${fmtNum(s.reserve)} km`]);
  } else {
    const rounds = (s.rounds || []).filter((r) => r.latency_ms !== null && r.latency_ms !== undefined);
    const near = rounds.reduce((b, r) => (!b || Math.abs(r.tick - tick) < Math.abs(b.tick - tick) ? r : b), null);
    if (near) rows.push(["#81d4fa", `round at ${fmtTime(near.tick / R.hz)}: ${Math.round(near.latency_ms)} ms, ${near.status} (${near.trigger || "–"})`]);
    else rows.push([null, "no planning round"]);
  }
  return rows;
}

function tipOf(svg) {
  const fig = svg.closest("figure");
  let tip = fig.querySelector(".chart-tip");
  if (!tip) { tip = document.createElement("div"); tip.className = "chart-tip"; tip.hidden = true; fig.appendChild(tip); }
  return tip;
}

function showHover(sel, svg, ev) {
  const f = svg._f;
  if (!f || !R.series) return;
  const box = svg.getBoundingClientRect();
  const px = ev.clientX - box.left;
  if (px < PAD.left || px > f.w - PAD.right) { hideHover(svg); return; }
  const tick = Math.min(Math.max(f.tickAt(px), 0), R.lastTick);
  let hover = svg.querySelector("line.hover-line");
  if (!hover) hover = el("line", { class: "hover-line", y1: PAD.top, y2: f.h - PAD.bottom }, svg);
  hover.setAttribute("x1", px); hover.setAttribute("x2", px);
  const tip = tipOf(svg);
  tip.replaceChildren();
  for (const [colour, words] of hoverValues(sel, tick)) {
    const div = document.createElement("div");
    if (colour) { const i = document.createElement("i"); i.style.background = colour; div.appendChild(i); }
    div.append(words);
    tip.appendChild(div);
  }
  tip.hidden = false;
  tip.dataset.tick = String(Math.round(tick));
  const fig = svg.closest("figure").getBoundingClientRect();
  const left = box.left - fig.left + px + 12;
  tip.style.left = `${Math.min(left, fig.width - tip.offsetWidth - 4)}px`;
  tip.style.top = `${box.top - fig.top + 4}px`;
  const drag = svg._drag;
  if (drag && Math.abs(px - drag.px) >= DRAG_PX) {
    drag.moved = true;
    let zb = svg.querySelector("rect.zoom-box");
    if (!zb) zb = el("rect", { class: "zoom-box", y: PAD.top, height: f.h - PAD.top - PAD.bottom }, svg);
    zb.setAttribute("x", Math.min(px, drag.px));
    zb.setAttribute("width", Math.abs(px - drag.px));
  }
}

function hideHover(svg) {
  svg.querySelector("line.hover-line")?.remove();
  const tip = svg.closest("figure").querySelector(".chart-tip");
  if (tip) tip.hidden = true;
}

// ----- zoom -------------------------------------------------------------------------------------

/** Show ticks from..to on every chart (clamped to the run; a span of at least a second). */
export function zoomCharts(from, to) {
  const last = Math.max(1, R.lastTick);
  let a = Math.max(0, Math.min(from, to)), b = Math.min(last, Math.max(from, to));
  const least = Math.min(last, Math.max(R.hz, 10));
  if (b - a < least) { const c = (a + b) / 2; a = Math.max(0, c - least / 2); b = Math.min(last, a + least); }
  if (a <= 0 && b >= last) { Z.from = 0; Z.to = null; } else { Z.from = a; Z.to = b; }
  drawCharts();
  renderChartHeads(R.tick);
}

function renderZoomTag() {
  R.chartSpan = { from: Z.from, to: spanTo(), zoomed: Z.to !== null };
  for (const sel of CHARTS) {
    const cap = $(sel).closest("figure").querySelector("figcaption");
    let tag = cap.querySelector(".zoomed");
    if (Z.to === null) { tag?.remove(); continue; }
    if (!tag) {
      tag = document.createElement("span");
      tag.className = "zoomed";
      tag.title = "show the whole run (or double-click a chart)";
      tag.addEventListener("click", () => zoomCharts(0, R.lastTick));
      cap.appendChild(tag);
    }
    tag.textContent = `${fmtTime(Z.from / R.hz)}–${fmtTime(spanTo() / R.hz)} ✕`;
  }
}

/** The pointer on the charts: hover values, wheel zoom, drag to zoom, double click to see it
 * all, click to seek. */
export function initCharts() {
  for (const sel of CHARTS) {
    const svg = $(sel);
    svg.addEventListener("pointermove", (ev) => showHover(sel, svg, ev));
    svg.addEventListener("pointerleave", () => { if (!svg._drag) hideHover(svg); });
    svg.addEventListener("wheel", (ev) => {
      const f = svg._f;
      if (!f || !R.lastTick) return;
      ev.preventDefault();
      const box = svg.getBoundingClientRect();
      const at = f.tickAt(ev.clientX - box.left);
      const k = Math.exp(ev.deltaY * (ev.deltaMode === 1 ? 16 : 1) * 0.0015);
      zoomCharts(at - (at - f.from) * k, at + (f.to - at) * k);
      showHover(sel, svg, ev);
    }, { passive: false });
    svg.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0 || !svg._f) return;
      svg._drag = { px: ev.clientX - svg.getBoundingClientRect().left, moved: false };
      svg.setPointerCapture(ev.pointerId);
    });
    svg.addEventListener("pointerup", (ev) => {
      const drag = svg._drag;
      svg._drag = null;
      try { svg.releasePointerCapture(ev.pointerId); } catch (_) { /* released */ }
      svg.querySelector("rect.zoom-box")?.remove();
      if (!drag || !R.runId || !R.lastTick) return;
      const f = svg._f;
      const px = ev.clientX - svg.getBoundingClientRect().left;
      if (drag.moved) zoomCharts(f.tickAt(drag.px), f.tickAt(px));
      else seek(Math.round(Math.min(Math.max(f.tickAt(px), 0), R.lastTick)), ev.timeStamp);
    });
    svg.addEventListener("dblclick", () => zoomCharts(0, R.lastTick));
  }
}
