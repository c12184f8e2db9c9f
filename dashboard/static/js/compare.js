/* Two stored runs side by side (/?compare=RUN_A,RUN_B; issue 14), from GET /api/compare:
 * the outcomes in a table with B - A deltas coloured by what they mean (green when B is
 * better on that figure: more points, fewer drones lost, less fuel used; red when worse; the
 * replans and the mission's length are neither), both runs' flown tracks on one map (A solid,
 * B dashed, one colour per drone), the scene (SAMs, airports) drawn once from A's end, each
 * target in two halves (its state at A's end on the left, B's own on the right), what B has
 * that A has not (a SAM or target added, or moved) marked, and the first tick where the
 * recorded states diverge, with a link opening B's replay there. No websocket; the token
 * (when there is one) brings the ground truth. The result is window.isr.compare. */

import { api } from "./api.js";
import { $, el, flippedText } from "./dom.js";
import { droneColour } from "./drones.js";
import { addMapLabel, drawMap, setTruthAvailable } from "./map.js";
import { state } from "./store.js";

const POINTS = 400;

/** The compare's state (window.isr.compare): the answer, once loaded. */
export const C = { a: null, b: null, answer: null, loaded: false };

const replayUrl = (id, tick) =>
  `/?replay=${encodeURIComponent(id)}` + (tick === null || tick === undefined ? "" : `&tick=${tick}`);

/** Open the compare of two runs: the page becomes the compare view. */
export async function openCompare(spec) {
  const [a, b] = spec.split(",").map((s) => s.trim());
  C.a = a; C.b = b;
  state.compare = C;
  document.body.classList.add("compare");
  document.title = `ISR mission — compare ${(a || "").slice(0, 8)} / ${(b || "").slice(0, 8)}`;
  $("#st-run").textContent = "compare";
  $("#map-hint").textContent = "compare: run A solid, run B dashed";
  if (!a || !b) {
    $("#cmp-summary").textContent = "give two runs: /?compare=RUN_A,RUN_B";
    return;
  }
  await loadCompare();
}

/** (Again, after the token changed: the scenes may now carry the ground truth.) */
export async function loadCompare() {
  setTruthAvailable(Boolean(state.token));
  let answer;
  try {
    const q = new URLSearchParams({ a: C.a, b: C.b, points: String(POINTS) });
    answer = await api("GET", "/api/compare?" + q.toString());
  } catch (err) {
    $("#cmp-summary").textContent = `these runs cannot be compared: ${err.message}`;
    return;
  }
  C.answer = answer;
  renderTable(answer);
  renderDivergence(answer);
  drawCompareMap(answer);
  C.loaded = true;
}

// ----- the table ----------------------------------------------------------------------------

const num = (v) => (typeof v === "number" && Number.isFinite(v) ? v : null);

function fmt(v, digits) {
  if (v === null || v === undefined) return "–";
  if (typeof v === "number") return digits ? v.toFixed(digits) : String(Math.round(v * 1000) / 1000);
  return String(v);
}

function delta(a, b, digits) {
  const x = num(a), y = num(b);
  if (x === null || y === null) return a === b ? "=" : "≠";
  const d = y - x;
  if (Math.abs(d) < 1e-9) return "0";
  return (d > 0 ? "+" : "") + (digits ? d.toFixed(digits) : String(Math.round(d * 1000) / 1000));
}

/** What a difference means, per figure: more points are better; fewer drones lost and less
 * fuel used are better; replans and mission length are neither (a longer mission or more
 * replans may be what collected more). */
export const BETTER = { points: "more", lost: "fewer", fuel_used: "fewer", replans: null, ticks: null };

/** "better", "worse", "same" or "neutral" for B's value against A's on this figure. */
export function meaning(key, a, b) {
  const x = num(a), y = num(b);
  if (x === null || y === null) return a === b ? "same" : "neutral";
  if (Math.abs(y - x) < 1e-9) return "same";
  const want = BETTER[key];
  if (!want) return "neutral";
  return (want === "more") === (y > x) ? "better" : "worse";
}

function row(tbody, key, label, a, b, d, title, sense) {
  const tr = document.createElement("tr");
  tr.dataset.key = key;
  for (const [text, cls] of [[label, "k"], [a, "a"], [b, "b"], [d, "d"]]) {
    const td = document.createElement(cls === "k" ? "th" : "td");
    td.className = cls;
    td.textContent = text;
    tr.appendChild(td);
  }
  const dv = tr.querySelector("td.d");
  dv.classList.add(sense);
  dv.dataset.meaning = sense;
  const want = BETTER[key];
  const why = sense === "better" || sense === "worse"
    ? `B is ${sense}: ${want} ${label.replace(/,.*$/, "")} is better`
    : sense === "same" ? "the same in both runs" : "neither better nor worse in itself";
  tr.title = title ? `${title}; ${why}` : why;
  tbody.appendChild(tr);
}

function runLink(id) {
  const a = document.createElement("a");
  a.href = replayUrl(id);
  a.textContent = id.slice(0, 12);
  a.title = `open the replay of ${id}`;
  return a;
}

function renderTable(answer) {
  const A = answer.a, B = answer.b;
  const head = $("#cmp-head");
  head.replaceChildren();
  const tr = document.createElement("tr");
  for (const [text, id] of [["", null], ["A", A.run_id], ["B", B.run_id], ["B − A", null]]) {
    const th = document.createElement("th");
    th.textContent = text;
    if (id) { th.append(" "); th.appendChild(runLink(id)); }
    tr.appendChild(th);
  }
  head.appendChild(tr);
  const body = $("#cmp-body");
  body.replaceChildren();
  row(body, "status", "status", A.status, B.status, A.status === B.status ? "=" : "≠", "",
      A.status === B.status ? "same" : "neutral");
  row(body, "points", "points", fmt(A.points), fmt(B.points), delta(A.points, B.points), "",
      meaning("points", A.points, B.points));
  const la = A.lost || [], lb = B.lost || [];
  row(body, "lost", "drones lost", String(la.length), String(lb.length), delta(la.length, lb.length),
      `A: ${la.join(", ") || "none"}; B: ${lb.join(", ") || "none"}`, meaning("lost", la.length, lb.length));
  row(body, "fuel_used", "fuel used, km", fmt(A.fuel_used, 1), fmt(B.fuel_used, 1), delta(A.fuel_used, B.fuel_used, 1),
      "", meaning("fuel_used", A.fuel_used, B.fuel_used));
  row(body, "replans", "replans", fmt(A.replans), fmt(B.replans), delta(A.replans, B.replans), "",
      meaning("replans", A.replans, B.replans));
  row(body, "ticks", "ticks", fmt(A.ticks), fmt(B.ticks), delta(A.ticks, B.ticks), "",
      meaning("ticks", A.ticks, B.ticks));
  const collected = (run) => ((run.scene || {}).targets || []).filter((t) => t.status === "collected").length;
  row(body, "targets", "targets collected", String(collected(A)), String(collected(B)),
      delta(collected(A), collected(B)), "", meaning("points", collected(A), collected(B)));
  const rel = B.parent_run_id === A.run_id ? "B is a fork of A"
    : A.parent_run_id === B.run_id ? "A is a fork of B" : "";
  $("#cmp-summary").textContent = rel;
}

function renderDivergence(answer) {
  const box = $("#cmp-diverge");
  box.replaceChildren();
  const tick = answer.first_divergence;
  if (tick === null || tick === undefined) {
    box.textContent = "the recorded states never diverge";
    box.dataset.tick = "";
    return;
  }
  box.dataset.tick = String(tick);
  box.append(`first divergence at tick ${tick} `);
  const a = document.createElement("a");
  a.id = "cmp-diverge-link";
  a.href = replayUrl(answer.b.run_id, tick);
  a.textContent = "open B's replay there";
  box.appendChild(a);
}

// ----- the map ------------------------------------------------------------------------------

function trackD(poly) {
  return poly.map((p, i) => `${i ? "L" : "M"}${p[0]},${p[1]}`).join(" ");
}

/** What B's scene has that A's has not: ids new to B, or at another place. */
function extras(listA, listB) {
  const byId = new Map((listA || []).map((s) => [s.id, s]));
  return (listB || []).filter((s) => {
    const o = byId.get(s.id);
    return !o || Math.abs(o.x - s.x) > 1e-6 || Math.abs(o.y - s.y) > 1e-6;
  });
}

function drawCompareMap(answer) {
  const A = answer.a, B = answer.b;
  const sceneA = A.scene || {};
  // The scene drawn once, from A, without A's own paths (the tracks below replace them).
  const drones = {};
  for (const [id, d] of Object.entries(sceneA.drones || {}))
    drones[id] = { ...d, flown: [], frozen: [], planned: [] };
  const extraSams = extras(sceneA.sams, (B.scene || {}).sams);
  const extraTargets = extras(sceneA.targets, (B.scene || {}).targets);
  const scene = { ...sceneA, drones, draft: null };
  // B's halves of the targets and what only B has: drawn again with every redraw of the map
  state.mapDecorator = () => {
    splitTargets(sceneA, B.scene || {});
    drawExtras(extraSams, extraTargets);
  };
  state.scene = scene;
  state.fitKey = "";
  drawMap(scene);

  const ids = [...new Set([...Object.keys(A.tracks || {}), ...Object.keys(B.tracks || {}),
                           ...Object.keys(drones)])];
  const g = $("#l-tracks");
  g.replaceChildren();
  for (const [side, run] of [["a", A], ["b", B]]) {
    for (const [id, poly] of Object.entries(run.tracks || {})) {
      if ((poly || []).length < 2) continue;
      el("path", { class: `track track-${side}`, d: trackD(poly), stroke: droneColour(id, ids),
                   "data-drone-id": id, "data-run": side, "vector-effect": "non-scaling-stroke" }, g);
    }
  }
  C.extraSams = extraSams.map((s) => s.id);
  C.extraTargets = extraTargets.map((t) => t.id);
}

/** What only B has, marked (SAMs and targets added or moved in B), labelled "B: id". */
function drawExtras(extraSams, extraTargets) {
  const x = $("#l-extra");
  x.replaceChildren();
  const u = state.unit;
  for (const s of extraSams) {
    const grp = el("g", { class: "extra sam-b", "data-sam-id": s.id, transform: `translate(${s.x},${s.y})` }, x);
    el("circle", { class: "zone", r: s.range, "vector-effect": "non-scaling-stroke" }, grp);
    const t = flippedText(grp, u * 0.6, -u * 0.3, `B: ${s.id}`, u * 1.2, { class: "lbl" });
    addMapLabel("sam", "B:" + s.id, t, s.x, s.y, u * 0.7, u * 0.45);
  }
  for (const t of extraTargets) {
    const grp = el("g", { class: "extra target-b", "data-target-id": t.id, "data-status-b": t.status,
                          transform: `translate(${t.x},${t.y})` }, x);
    el("circle", { r: u * 1.4, "vector-effect": "non-scaling-stroke" }, grp);
    el("title", {}, grp).textContent = `${t.id}: only in B (${t.status})`;
    const lbl = flippedText(grp, u * 1.6, -u * 0.9, `B: ${t.id}`, u * 1.1, { class: "lbl" });
    addMapLabel("target", "B:" + t.id, lbl, t.x, t.y, u * 1.7, u * 1.5);
  }
}

/** Each target drawn once, with two halves: its state at A's end on the left (the circle
 * map.js drew from A's scene), at B's end on the right (B's own state: collected there,
 * planned, pending, excluded, or gone), so B's points sit next to B's own targets. */
function splitTargets(sceneA, sceneB) {
  const byB = new Map((sceneB.targets || []).map((t) => [t.id, t]));
  const statusA = new Map((sceneA.targets || []).map((t) => [t.id, t.status]));
  for (const grp of document.querySelectorAll("#l-targets g.target[data-target-id]")) {
    const id = grp.dataset.targetId;
    const circle = grp.querySelector("circle");
    const r = Number(circle.getAttribute("r"));
    const b = byB.get(id);
    const status = b ? b.status : "gone";
    grp.dataset.statusA = statusA.get(id) || "";
    grp.dataset.statusB = status;
    const points = [];
    for (let k = 0; k <= 24; k++) {
      const a = -Math.PI / 2 + (Math.PI * k) / 24; // the right half, bottom to top
      points.push(`${(r * Math.cos(a)).toFixed(4)},${(r * Math.sin(a)).toFixed(4)}`);
    }
    const half = el("polygon", { class: `half-b ${status}`, points: points.join(" "), "data-status": status,
                                 "vector-effect": "non-scaling-stroke" });
    circle.after(half);
    half.after(el("line", { class: "half-line", x1: 0, y1: -r, x2: 0, y2: r, "vector-effect": "non-scaling-stroke" }));
    el("title", {}, grp).textContent = `${id}: A ${statusA.get(id) || "–"} (left), B ${status} (right)`;
  }
}
