/* The plan history of the replay: every plan version (status, trigger, latency, points and
 * planned fuel with their change, the drones whose route changed), the one in force at the
 * playhead marked. A click selects a version (again: deselects): its paths are drawn on the
 * map (#l-plan-sel, solid, in the drones' colours) and, for the drones it changed, their
 * paths in the plan in force before it (#l-plan-prev, grey dots). Its "go" button seeks to
 * the version's tick. */

import { $, el, pts } from "./dom.js";
import { droneColour } from "./drones.js";
import { label } from "./format.js";
import { fmtMission } from "./playback.js";
import { seek } from "./replay.js";

let plans = [];
let selected = null;
let inForce = undefined;

const IN_FORCE = new Set(["committed", "superseded"]);
const short = (id) => String(id || "").slice(0, 8);
const signed = (v, digits = 0) =>
  v === null || v === undefined ? "–" : (v >= 0 ? "+" : "−") + Math.abs(v).toFixed(digits);

/** The plan in force before this one: the last committed (or since superseded) version
 * before it. */
export function previousPlan(plan) {
  const i = plans.indexOf(plan);
  for (let j = i - 1; j >= 0; j--) if (IN_FORCE.has(plans[j].status) && plans[j].tick <= plan.tick) return plans[j];
  return null;
}

/** A new plan history (a new run). */
export function setPlans(list) {
  plans = list || [];
  selected = null;
  inForce = undefined;
  const ul = $("#plans");
  ul.replaceChildren();
  if (!plans.length) {
    const li = document.createElement("li");
    li.className = "muted";
    li.textContent = "no plan versions stored";
    ul.appendChild(li);
  }
  for (const p of plans) ul.appendChild(planItem(p));
  drawSelection();
}

function planItem(p) {
  const li = document.createElement("li");
  li.dataset.planId = p.plan_id;
  li.dataset.tick = p.tick;
  li.dataset.status = p.status;
  const t = document.createElement("span"); t.className = "t"; t.textContent = fmtMission(p.tick);
  const id = document.createElement("span"); id.className = "pid"; id.textContent = short(p.plan_id);
  const st = document.createElement("span"); st.className = "status " + p.status; st.textContent = p.status;
  const go = document.createElement("button");
  go.className = "go"; go.textContent = "go"; go.title = `seek to tick ${p.tick}`;
  go.addEventListener("click", (ev) => { ev.stopPropagation(); seek(p.tick, ev.timeStamp); select(p.plan_id, true); });
  const facts = document.createElement("span");
  facts.className = "facts";
  const latency = p.latency_ms === null || p.latency_ms === undefined ? "" : ` · ${Math.round(p.latency_ms)} ms`;
  facts.textContent = `${p.trigger || "–"}${latency} · ${p.points ?? "–"} pts (${signed(p.points_delta)})`
    + ` · fuel ${p.fuel === null || p.fuel === undefined ? "–" : p.fuel.toFixed(1)} km (${signed(p.fuel_delta, 1)})`
    + ((p.changed || []).length ? ` · changed ${p.changed.map(label).join(" ")}` : " · no route changed");
  li.title = `plan ${p.plan_id} at tick ${p.tick}`;
  li.append(t, id, st, facts);
  st.after(go);
  li.addEventListener("click", () => select(p.plan_id));
  return li;
}

/** Select a plan version (a second click deselects, unless keep). */
export function select(planId, keep = false) {
  selected = selected === planId && !keep ? null : planId;
  for (const li of document.querySelectorAll("#plans li[data-plan-id]"))
    li.classList.toggle("selected", li.dataset.planId === selected);
  drawSelection();
}

function drawSelection() {
  const sel = $("#l-plan-sel"), prev = $("#l-plan-prev");
  sel.replaceChildren(); prev.replaceChildren();
  sel.setAttribute("class", "plan-sel"); prev.setAttribute("class", "plan-prev");
  const plan = plans.find((p) => p.plan_id === selected);
  if (!plan) return;
  for (const [id, path] of Object.entries(plan.paths || {})) {
    if ((path || []).length < 2) continue;
    el("polyline", { points: pts(path), stroke: droneColour(id), "data-drone-id": id,
                     "vector-effect": "non-scaling-stroke" }, sel);
  }
  const before = previousPlan(plan);
  if (!before) return;
  for (const id of plan.changed || []) {
    const path = (before.paths || {})[id] || [];
    if (path.length < 2) continue;
    el("polyline", { points: pts(path), "data-drone-id": id, "data-plan-id": before.plan_id,
                     "vector-effect": "non-scaling-stroke" }, prev);
  }
}

/** Mark the version in force at the playhead (the scene's plan, or the last committed one
 * at or before the tick). */
export function renderPlanHead(planId, tick) {
  let id = planId;
  if (!id) {
    const last = plans.filter((p) => IN_FORCE.has(p.status) && p.tick <= tick).pop();
    id = last ? last.plan_id : null;
  }
  if (id === inForce) return;
  inForce = id;
  for (const li of document.querySelectorAll("#plans li[data-plan-id]"))
    li.classList.toggle("in-force", li.dataset.planId === id);
}

export const selectedPlan = () => selected;
