/* The status line at the top: run, tick, time, mode, speed (and the active speed button),
 * points, the frames the server dropped for this page, and the dashboard's link to the
 * mission (MQTT: up / down / connecting, whether a command can reach it now; read from
 * /api/state's "link" every few seconds, not shown for an in-process run). */

import { checkPause } from "./banners.js";
import { $ } from "./dom.js";
import { fmtTime } from "./format.js";
import { TERMINAL, missionTime, runOver, startupPhase } from "./run_state.js";
import { state } from "./store.js";

const LINK_EVERY_MS = 3000;
let linkTimer = null;

/** The #st-link element, added after the websocket's when the page has none. */
function linkElement() {
  let el = document.getElementById("st-link");
  if (!el) {
    el = document.createElement("span");
    el.id = "st-link";
    el.className = "stat ws";
    el.hidden = true;
    const after = document.getElementById("st-ws");
    if (after) after.after(el); else document.getElementById("statusbar")?.append(el);
  }
  return el;
}

/** Show the link to the mission: a green "link up", a red "link down" with the reason. */
export function renderLink(link) {
  state.link = link || null;
  const el = linkElement();
  if (!link || link.state === "local") { el.hidden = true; return; }
  el.hidden = false;
  const ok = link.state === "up" && link.commands;
  el.dataset.state = ok ? "open" : (link.state === "connecting" ? "connecting" : "closed");
  let text = "link " + link.state;
  if (link.state === "up" && !link.commands) text += link.stale ? " · run stale" : " · commands wait";
  el.textContent = text;
  el.title = [
    link.broker ? "broker " + link.broker : "",
    link.commands ? "commands reach the mission" : "commands cannot reach the mission now (503)",
    link.reason || "",
    link.reconnects ? `reconnected ${link.reconnects}×` : "",
  ].filter(Boolean).join("\n");
}

async function pollLink() {
  try {
    const response = await fetch("/api/state", { cache: "no-store" });
    if (response.ok) renderLink((await response.json()).link);
    else renderLink({ state: "down", commands: false, reason: `dashboard answered ${response.status}` });
  } catch (err) {
    renderLink({ state: "down", commands: false, reason: "the dashboard is unreachable: " + err.message });
  }
}

/** Start reading the link every few seconds (once). */
export function watchLink() {
  if (linkTimer !== null) return;
  pollLink();
  linkTimer = setInterval(() => { if (!document.hidden) pollLink(); }, LINK_EVERY_MS);
}

/** The points line: what was collected, and while the run flies what the plan in force
 * still means to collect (the planned targets not collected yet); once it is over, only what
 * was collected (the tooltip says what was planned and left). */
export function pointsText(scene, collected, over) {
  const round = (v) => Math.round(v * 10) / 10;
  const planned = (scene.targets || []).filter((t) => t.status === "planned")
    .reduce((s, t) => s + (t.priority || 0), 0);
  if (over) {
    return [`points ${round(collected)} collected`, planned
      ? `the run is over: ${round(planned)} more points were planned and not collected`
      : "the run is over"];
  }
  return [`points ${round(collected)} collected · ${round(planned)} still planned`,
          "collected so far, and the points of the targets the plan in force still means to collect"];
}

/** The mode shown: the run's end state, STARTING, NO LIVE RUN, else the executive's mode. */
function modeText(scene, tel) {
  if (state.replay || state.compare) return tel.mode || scene.mode || "–";
  if (state.live === false && !state.runId) return "NO LIVE RUN";
  const st = state.status && state.status.state;
  if (st && TERMINAL.has(st)) return st.toUpperCase();
  if (startupPhase()) return "STARTING";
  return tel.mode || scene.mode || "–";
}

/** Write the status line from the latest scene, telemetry, status and stats. */
export function renderStatus() {
  watchLink();
  const scene = state.scene || {};
  const tel = state.telemetry || {};
  $("#st-run").textContent = "run " + (state.runId ? state.runId.slice(0, 8) : "–");
  $("#st-run").title = state.runId || "";
  $("#st-tick").textContent = "tick " + (tel.tick ?? scene.tick ?? "–");
  $("#st-time").textContent = "t " + fmtTime(missionTime());
  const mode = modeText(scene, tel);
  const modeEl = $("#st-mode");
  modeEl.textContent = mode; modeEl.dataset.mode = mode;
  checkPause(mode);
  const speed = scene.speed;
  if (!state.replay) {
    $("#st-speed").textContent = "speed " + (speed === null || speed === undefined ? (scene.run_id ? "max" : "–") : speed + "x");
    $("#st-speed").title = "the mission's pace: times real time";
  }
  for (const b of document.querySelectorAll("#speeds button")) {
    const v = b.dataset.speed;
    b.classList.toggle("active", (v === "max" && speed === null) || Number(v) === speed);
  }
  const collected = Object.values(tel.drones || {}).reduce((s, d) => s + (d.points || 0), 0)
    || scene.collected_points || 0;
  const over = state.replay ? state.replay.tick >= state.replay.lastTick && state.replay.lastTick > 0
    : runOver();
  const [text, title] = pointsText(scene, collected, over);
  $("#st-points").textContent = text;
  $("#st-points").title = title;
  const st = state.stats;
  // Lost: queued messages (events...) thrown away. Telemetry and scene messages a newer one
  // replaced (fast ticks, the frame-rate cap) are superseded, not lost: the newest is sent.
  const lost = st ? (st.lost ?? st.dropped_total) : 0;
  $("#st-dropped").textContent = "dropped " + lost;
  if (st) $("#st-dropped").title = `events and other queued messages lost: ${lost}; `
    + `telemetry / scene superseded by a newer one before sending (the newest is drawn): ${st.superseded ?? 0}; `
    + `per topic: ${JSON.stringify(st.dropped)}, pending ${st.pending}`;
}
