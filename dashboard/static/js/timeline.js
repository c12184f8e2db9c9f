/* The event timeline: one line per event, newest on top (at most MAX_EVENTS), coloured by
 * category, sim commands hidden unless asked for; a click shows the event in #detail as
 * "key: value" lines and centres the map where it happened (in a replay, at that moment). */

import { $ } from "./dom.js";
import { fmtTime, label } from "./format.js";
import { seek } from "./replay.js";
import { state } from "./store.js";
import { centreOn } from "./viewport.js";

const MAX_EVENTS = 600; // timeline items kept in the page
const VERBOSE_KINDS = new Set(["command_applied", "drone_holding"]);

function category(kind) {
  if (kind.startsWith("SAFETY_") || ["NO_SAFE_OPTION", "RETURN_TO_BASE", "DIVERT", "PLAN_INFEASIBLE", "PLAN_UNSAFE"].includes(kind)) return "safety";
  if (["COMMIT_PLAN", "DRAFT_READY", "REVIEW", "PLAN_REJECTED", "STALE_DRAFT", "REBASE", "REBASE_FAILED", "REVIEW_TIMEOUT", "AGENT_PROPOSAL", "AGENTS_DONE", "AGENTS", "AGENT_CADENCE", "NOT_PLANNED", "SPARES_RELEASED"].includes(kind)) return "plan";
  if (["CUT_AND_FREEZE", "REPLAN_REMAINDER", "REPLAN_FAILED", "CONTINUE", "DIVERT", "RETURN_TO_BASE", "RESET", "PAUSE", "CONSTRAINTS", "HOLD"].includes(kind)) return "replan";
  if (["sam_detected", "drone_lost", "target_missed"].includes(kind)) return "threat";
  if (["edit_applied", "edit_rejected"].includes(kind)) return "edit";
  if (["HUMAN_COMMAND", "COMMAND_IGNORED", "CMD_REJECTED", "STOPPED"].includes(kind)) return "command";
  return "sim";
}

const ms = (v) => (v === undefined || v === null ? "" : ` in ${Math.round(v)} ms`);
const short = (id) => (id ? String(id).slice(0, 6) : "");

/** An event in a few words (the timeline's line, the banners). */
export function summary(e) {
  switch (e.kind) {
    case "COMMIT_PLAN": return `plan ${short(e.plan_id)}: ${e.points} pts` + (e.trigger ? ` (${e.trigger})` : e.cut_tick !== undefined ? ` from tick ${e.cut_tick}` : "")
      + (e.rebased_from ? `, rebased from ${short(e.rebased_from)}` : "")
      + (e.approved && e.approved !== "auto" ? `, approved by ${e.approved}` : "")
      + (e.agent_applied ? " (agents)" : "");
    case "NOT_PLANNED": return e.reason; // "D1: no airport is reachable ...": it stays parked
    case "SPARES_RELEASED": return `spare ${e.drones.map(label).join(", ")} may fly now: ${e.change}`;
    case "REBASE": return `rebasing ${short(e.plan_id)} (${e.purpose}) onto tick ${e.cut_tick}`;
    case "REBASE_FAILED": return `rebase of ${short(e.plan_id)} failed: ${e.reason}`;
    case "REVIEW_TIMEOUT": return `review timed out after ${Math.round(e.waited_s)} s: ${e.action}`;
    case "AGENTS_DONE": return `agents: ${e.offered ? "a proposal to rebase" : "nothing to apply"}`;
    case "AGENTS": return `${e.agent} switched ${e.on ? "on" : "off"}` + (Object.keys(e.off || {}).length ? `; off: ${Object.keys(e.off).join(", ")}` : "; every agent on");
    case "AGENT_CADENCE": return `${e.agent} asked on its cadence (every ${e.every_s} s)` + (e.waited ? `, late: ${e.waited}` : "");
    case "AGENT_PROPOSAL": return `agents' proposal ${e.applied ? "applied" : "not applied"}: ${e.why}`;
    case "SAFETY_DIVERT": return `${label(e.drone)} diverted around ${e.sam} (${e.reason}), ${e.km} km`;
    case "SAFETY_HOLD": return `${label(e.drone)} holds clear of ${e.sam} (${e.reason})`;
    case "SAFETY_RETURN": return `${label(e.drone)} sent home to ${e.airport}: ${e.reason}`;
    case "SAFETY_FALLBACK": return `replan failed: ${Object.entries(e.actions || {}).map(([d, a]) => `${label(d)} ${a}`).join(", ")}`;
    case "NO_SAFE_OPTION": return `${label(e.drone)}: no safe option (${e.reason})`;
    case "PLAN_UNSAFE": return `${label(e.drone)}'s plan enters ${e.sam} in ${Math.round(e.in_s)} s: the safety layer will ${e.action} in ${Math.round(e.acts_in_s)} s unless a plan takes over`;
    case "PLAN_INFEASIBLE": return `${label(e.drone)}'s plan needs ${(-e.margin).toFixed(1)} km more than its ${Math.round(e.fuel)} km of fuel${e.paused ? " (paused)" : ""}: ${e.fix}`;
    case "CUT_AND_FREEZE": return `cut at tick ${e.cut_tick}: ${e.trigger}`;
    case "REPLAN_REMAINDER": return `replanning: ${e.trigger}`;
    case "DRAFT_READY": return `draft ${e.points} pts${ms(e.latency_ms)}` + (e.agent_applied ? " (agents)" : "");
    case "REVIEW": return `waiting for review: ${e.points} pts` + (e.note ? ` (${e.note})` : "");
    case "REPLAN_FAILED": return `${e.reason || ""}${ms(e.latency_ms)}`;
    case "STALE_DRAFT": return `stale draft (cut ${e.cut_tick} passed): replanning`;
    case "PLAN_REJECTED": return `rejected: ${e.reason}`;
    case "CONTINUE": return e.change ? `${e.change}: ${e.reason || "no replan"}` : `resumed ${(e.resumed || []).map(label).join(" ")}`;
    case "DIVERT": return `${label(e.drone)} holds off ${e.sam}`;
    case "RETURN_TO_BASE": return `${label(e.drone)} -> ${e.airport} (fuel ${Math.round(e.fuel)})`;
    case "PAUSE": return `holding ${(e.holding || []).map(label).join(" ")}`;
    case "HOLD": return `${label(e.drone)} holds where it is (${e.reason})`;
    case "STOPPED": return `the mission was stopped: ${e.reason}`;
    case "FORKED": return `forked from ${short(e.parent)} at tick ${e.tick}`;
    case "HUMAN_COMMAND": return `${e.command}${e.drone ? " " + label(e.drone) : ""}${e.text ? ": " + e.text : ""} (${e.source})`;
    case "COMMAND_IGNORED": return `${e.command}${e.drone ? " " + label(e.drone) : ""}: ${e.reason}`;
    case "CMD_REJECTED": return e.reason;
    case "CONSTRAINTS": return e.text;
    case "edit_applied": return describeEdit(e.edit);
    case "edit_rejected": return `${describeEdit(e.edit)}: ${e.reason}`;
    case "sam_detected": return `${label(e.drone)} detected ${e.sam} (range ${e.range})`;
    case "drone_lost": return `${label(e.drone)}: ${e.reason}${e.sam ? " " + e.sam : ""}`;
    case "drone_landed": return `${label(e.drone)} at ${e.airport}`;
    case "target_collected": return `${label(e.drone)} ${e.target} +${e.points}`;
    case "target_missed": return `${label(e.drone)} ${e.target}: ${e.reason}`;
    case "command_applied": return `${label(e.drone)} ${e.command}: ${e.detail}`;
    case "command_rejected": return `${label(e.drone)} ${e.command}: ${e.reason}`;
    case "drone_holding": return `${label(e.drone)} (${e.reason})`;
    default: return "";
  }
}

function describeEdit(ed) {
  if (!ed) return "";
  const at = ed.pos ? `(${ed.pos.map((v) => Math.round(v * 10) / 10).join(", ")})` :
             ed.x !== undefined ? `(${Math.round(ed.x * 10) / 10}, ${Math.round(ed.y * 10) / 10})` : "";
  return `${ed.source || ""} ${ed.op} ${ed.id || ed.drone || ""} ${at}${ed.range ? " r " + ed.range : ""}`.trim();
}

/** Empty the timeline (a new hello, or a new run). */
export function clearTimeline() {
  $("#timeline").replaceChildren();
}

/** Add one event on top of the timeline. */
export function addEvent(e) {
  if (!e || !e.kind) return;
  if (e.kind === "drone_lost" && e.drone) {
    state.lostReasons = state.lostReasons || {};
    state.lostReasons[e.drone] = `${e.reason || "lost"}${e.sam ? " (" + e.sam + ")" : ""}`;
  }
  const list = $("#timeline");
  const seq = e.seq || ++state.lastSeq;
  state.lastSeq = Math.max(state.lastSeq, seq);
  const li = document.createElement("li");
  const cat = category(e.kind);
  li.className = "c-" + cat + (VERBOSE_KINDS.has(e.kind) ? " verbose" : "");
  li.dataset.kind = e.kind;
  li.dataset.seq = seq;
  li.dataset.tick = e.tick;
  const hz = (state.scene && state.scene.tick_hz) || 20;
  const t = document.createElement("span"); t.className = "t"; t.textContent = fmtTime((e.tick || 0) / hz);
  const k = document.createElement("span"); k.className = "kind"; k.textContent = e.kind;
  const s = document.createElement("span"); s.className = "sum"; s.textContent = summary(e);
  s.title = s.textContent;
  li.append(t, k, s);
  li._event = e;
  list.prepend(li); // newest on top
  while (list.childElementCount > MAX_EVENTS) list.lastElementChild.remove();
}

/** Show obj as JSON in #detail (li: the timeline line it belongs to; a second click on the
 * same line, or no obj, hides it). */
export function showDetail(obj, li) {
  const pre = $("#detail");
  for (const open of document.querySelectorAll("#timeline li.open")) open.classList.remove("open");
  if (!obj || (li && pre.dataset.seq === li.dataset.seq && !pre.hidden)) {
    pre.hidden = true; pre.dataset.seq = ""; return;
  }
  if (li) { li.classList.add("open"); pre.dataset.seq = li.dataset.seq; } else pre.dataset.seq = "";
  pre.textContent = readable(obj);
  pre.hidden = false;
}

/** An object as "key: value" lines (nested objects indented, lists of plain values on one
 * line, ids and times as they are): easier to read than JSON, as complete. */
export function readable(obj, indent = "") {
  const plain = (v) => v === null || typeof v !== "object";
  const lines = [];
  for (const [k, v] of Object.entries(obj || {})) {
    if (v === undefined || v === null) continue; // nothing to say: not a "null" line
    if (plain(v)) lines.push(`${indent}${k}: ${typeof v === "number" && !Number.isInteger(v) ? Math.round(v * 1000) / 1000 : v}`);
    else if (Array.isArray(v) && v.every(plain)) lines.push(`${indent}${k}: ${v.length ? v.join(", ") : "none"}`);
    else if (Array.isArray(v) && v.every((x) => Array.isArray(x) && x.every(plain)) && v.length > 6)
      lines.push(`${indent}${k}: ${v.length} points`);
    else lines.push(`${indent}${k}:`, readable(v, indent + "  "));
  }
  return lines.filter((l) => l !== "").join("\n");
}

/** Where an event happened (km), or null: its own position, the edit's, or that of the SAM,
 * target, airport or drone it names (as the map shows them now). */
export function eventPlace(e) {
  const xy = (o) => (o && Number.isFinite(o.x) && Number.isFinite(o.y) ? { x: o.x, y: o.y } : null);
  const at = (p) => (Array.isArray(p) && p.length >= 2 ? { x: Number(p[0]), y: Number(p[1]) } : null);
  const scene = state.scene || {};
  const find = (list, id) => (id ? (list || []).find((o) => o.id === id) : null);
  const ed = e.edit || {};
  const drone = e.drone || ed.drone;
  const live = drone ? (((state.telemetry || {}).drones || {})[drone] || (scene.drones || {})[drone]) : null;
  return at(e.pos) || xy(e) || at(ed.pos) || xy(ed)
    || xy(find(scene.sams, e.sam || (String(ed.op || "").includes("sam") ? ed.id : null)))
    || xy(find(scene.targets, e.target || (String(ed.op || "").includes("target") ? ed.id : null)))
    || xy(find(scene.airports, e.airport))
    || xy(live);
}

/** The sim-commands switch; a click on a line shows its event and centres the map where it
 * happened (in a replay, the playhead moves to its moment first). */
export function initTimeline() {
  $("#tl-verbose").addEventListener("change", (ev) => $("#timeline").classList.toggle("verbose", ev.target.checked));
  $("#timeline").addEventListener("click", (ev) => {
    const li = ev.target.closest("li");
    if (!li || !li._event) return;
    showDetail(li._event, li);
    const e = li._event;
    if (state.replay && Number.isFinite(Number(li.dataset.tick))) {
      seek(Number(li.dataset.tick), ev.timeStamp);
      // a drone's place at that moment comes with the picture at the tick
      if (!eventPlace({ ...e, drone: undefined })) { pendingFocus = e; return; }
    }
    const p = eventPlace(e);
    if (p) centreOn(p.x, p.y);
  });
}

let pendingFocus = null;

/** In a replay, centre on the event clicked once the picture at its tick is drawn. */
export function focusPending() {
  if (!pendingFocus || !state.replay || !state.scene) return;
  if (state.scene.tick !== Number(pendingFocus.tick)) return;
  const p = eventPlace(pendingFocus);
  pendingFocus = null;
  if (p) centreOn(p.x, p.y);
}
