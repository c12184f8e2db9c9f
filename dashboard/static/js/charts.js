/* The replay's charts under the map, plain SVG in screen pixels (redrawn when resized): points
 * collected and planned over time, fuel per drone (the drones' colours) with the policy's
 * reserve, and each planning round's latency (a bar at its tick; failed rounds red). Each
 * has a playhead line in step with the bar; a click on a chart seeks to its tick. The data
 * is /api/runs/{id}/series (state.replay.series). */

import { $, el } from "./dom.js";
import { droneColour } from "./drones.js";
import { label } from "./format.js";
import { R, seek } from "./replay.js";

const PAD = { left: 34, right: 8, top: 8, bottom: 16 };
const CHARTS = ["#ch-points", "#ch-fuel", "#ch-latency"];
let observer = null;

function frameOf(svg) {
  const w = Math.max(60, svg.clientWidth), h = Math.max(40, svg.clientHeight);
  svg.setAttribute("viewBox", `0 0 ${w} ${h}`);
  const x = (tick) => PAD.left + ((w - PAD.left - PAD.right) * tick) / Math.max(1, R.lastTick);
  return { w, h, x };
}

function yScale(h, max) {
  const top = max > 0 ? max * 1.08 : 1;
  return (v) => h - PAD.bottom - ((h - PAD.top - PAD.bottom) * v) / top;
}

function axes(svg, f, y, max, unit) {
  el("line", { class: "axis", x1: PAD.left, y1: f.h - PAD.bottom, x2: f.w - PAD.right, y2: f.h - PAD.bottom }, svg);
  el("line", { class: "axis", x1: PAD.left, y1: PAD.top, x2: PAD.left, y2: f.h - PAD.bottom }, svg);
  const top = el("text", { x: PAD.left - 4, y: y(max) + 4, "text-anchor": "end" }, svg);
  top.textContent = fmtNum(max) + (unit || "");
  const zero = el("text", { x: PAD.left - 4, y: f.h - PAD.bottom, "text-anchor": "end" }, svg);
  zero.textContent = "0";
  const end = el("text", { x: f.w - PAD.right, y: f.h - 3, "text-anchor": "end" }, svg);
  const s = Math.floor(R.lastTick / R.hz);
  end.textContent = `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

const fmtNum = (v) => (Math.abs(v) >= 100 ? Math.round(v) : Math.round(v * 10) / 10).toString();

function line(svg, ticks, values, x, y, attrs) {
  if (!ticks.length) return null;
  let d = "";
  ticks.forEach((t, i) => {
    const v = values[i];
    if (v === null || v === undefined) return;
    d += (d ? " L " : "M ") + x(t).toFixed(1) + " " + y(v).toFixed(1);
  });
  return d ? el("path", { d, ...attrs }, svg) : null;
}

function playhead(svg, f) {
  const g = el("line", { class: "playhead", x1: 0, x2: 0, y1: PAD.top, y2: f.h - PAD.bottom }, svg);
  svg._x = f.x;
  return g;
}

/** Draw the three charts from the run's series (again on resize). */
export function drawCharts() {
  const s = R.series;
  for (const sel of CHARTS) $(sel).replaceChildren();
  if (!observer) {
    observer = new ResizeObserver(() => { if (R.series) { drawCharts(); renderChartHeads(R.tick); } });
    for (const sel of CHARTS) observer.observe($(sel));
  }
  if (!s) return;
  const ticks = s.ticks || [];

  // points collected and planned
  let svg = $("#ch-points"), f = frameOf(svg);
  let max = Math.max(1, ...(s.collected || []), ...(s.planned || []).filter((v) => v !== null));
  let y = yScale(f.h, max);
  axes(svg, f, y, max);
  line(svg, ticks, s.planned || [], f.x, y, { class: "series planned-s", "data-series": "planned" });
  line(svg, ticks, s.collected || [], f.x, y, { class: "series collected", "data-series": "collected" });
  playhead(svg, f);

  // fuel per drone, and the reserve
  svg = $("#ch-fuel"); f = frameOf(svg);
  const fuel = s.fuel || {};
  max = Math.max(1, ...Object.values(fuel).flat().filter((v) => v !== null));
  y = yScale(f.h, max);
  axes(svg, f, y, max);
  if (s.reserve !== null && s.reserve !== undefined) {
    el("line", { class: "reserve", x1: PAD.left, x2: f.w - PAD.right, y1: y(s.reserve), y2: y(s.reserve) }, svg)
      .appendChild(document.createElementNS("http://www.w3.org/2000/svg", "title")).textContent = `reserve ${s.reserve}`;
  }
  for (const [id, values] of Object.entries(fuel)) {
    const p = line(svg, ticks, values, f.x, y, { class: "series fuel", stroke: droneColour(id, Object.keys(fuel)), "data-series": "fuel-" + id });
    if (p) el("title", {}, p).textContent = label(id);
  }
  playhead(svg, f);

  // replan latency per round
  svg = $("#ch-latency"); f = frameOf(svg);
  const rounds = s.rounds || [];
  max = Math.max(1, ...rounds.map((r) => r.latency_ms || 0));
  y = yScale(f.h, max);
  axes(svg, f, y, max);
  for (const r of rounds) {
    if (r.latency_ms === null || r.latency_ms === undefined) continue;
    const bar = el("rect", {
      class: "bar" + (["rejected", "failed", "stale"].includes(r.status) ? " failed" : ""),
      x: f.x(r.tick) - 2, width: 4, y: y(r.latency_ms), height: Math.max(1, y(0) - y(r.latency_ms)),
      "data-tick": r.tick,
    }, svg);
    el("title", {}, bar).textContent = `tick ${r.tick}: ${Math.round(r.latency_ms)} ms, ${r.status} (${r.trigger || "–"})`;
  }
  // a path through the rounds too, so that the chart reads as a series
  line(svg, rounds.map((r) => r.tick), rounds.map((r) => r.latency_ms), f.x, y,
       { class: "series latency", stroke: "#81d4fa", "stroke-opacity": 0.5, "data-series": "latency" });
  playhead(svg, f);
}

/** Move the playhead line of every chart. */
export function renderChartHeads(tick) {
  for (const sel of CHARTS) {
    const svg = $(sel);
    const head = svg.querySelector("line.playhead");
    if (!head || !svg._x) continue;
    const x = svg._x(tick).toFixed(1);
    head.setAttribute("x1", x);
    head.setAttribute("x2", x);
  }
}

/** A click on a chart seeks to the tick under it. */
export function initCharts() {
  for (const sel of CHARTS) {
    const svg = $(sel);
    svg.addEventListener("click", (ev) => {
      if (!R.runId || !R.lastTick) return;
      const box = svg.getBoundingClientRect();
      const w = box.width - PAD.left - PAD.right;
      const f = Math.min(1, Math.max(0, (ev.clientX - box.left - PAD.left) / Math.max(1, w)));
      seek(Math.round(f * R.lastTick), ev.timeStamp);
    });
  }
}
