/* The engines panel: each agent engine of the live run (the roles it answers for, its model
 * and server) with its health from GET /api/engines: ok and the reachability call's latency,
 * or the reason it is not reachable. Checked when the page loads, every minute after, and on
 * the panel's "check" button (the server asks each engine at most once per few seconds,
 * whoever asks). Shown on a live page only (a replay or a compare runs no engines).
 *
 * Under it, a switch per planning agent (GET /api/agent_switches: on or off and why, and its
 * cadence): flipping one sends AGENT_OFF / AGENT_ON ROLE through the one command door
 * (POST /api/commands); the switch follows the run, not the click: it shows what the next
 * AGENTS event says (a refusal comes back as COMMAND_IGNORED in the timeline). */

import { $ } from "./dom.js";
import { command } from "./api.js";

const EVERY_MS = 60000;
let timer = null;

function text(tag, content, className) {
  const node = document.createElement(tag);
  node.textContent = content;
  if (className) node.className = className;
  return node;
}

/** One engine's row: a coloured mark, "roles: engine model @ server", then "ok 12 ms" or
 * the reason; the full record in the tooltip. */
function row(e) {
  const li = document.createElement("li");
  li.className = "engine " + (e.ok ? "ok" : "bad");
  li.dataset.engine = e.engine;
  li.dataset.ok = String(e.ok);
  const mark = text("span", e.ok ? "\u25cf " : "\u25b2 ");
  mark.style.color = e.ok ? "var(--ok)" : "var(--warn)";
  li.append(mark, text("b", e.roles.join(", ") + ": "));
  let what = e.engine + (e.model ? " " + e.model : "");
  if (e.base_url) what += " @ " + e.base_url.replace(/^https?:\/\//, "");
  li.append(what + " ");
  let health;
  if (!e.ok) health = e.error || "not reachable";
  else if (e.latency_ms == null) health = "ok (offline)";
  else health = `ok ${Math.round(e.latency_ms)} ms`;
  if (e.ok && e.model_listed === false) health += ", model not listed by the server";
  li.append(text("span", health, e.ok ? "health muted" : "health"));
  li.title = JSON.stringify(e, null, 1);
  return li;
}

/** Ask /api/engines and draw the answer (a failure is shown in the panel, not a toast). */
export async function checkEngines() {
  const list = $("#engines");
  if (!list) return;
  let answer;
  try {
    const response = await fetch("/api/engines");
    if (!response.ok) throw new Error(`${response.status} ${response.statusText}`);
    answer = await response.json();
  } catch (err) {
    list.replaceChildren(text("li", "engines: cannot ask the dashboard (" + err.message + ")", "muted"));
    return;
  }
  if (!answer.configured) {
    list.replaceChildren(text("li", "this dashboard serves no run of its own: no engines to check", "muted"));
    return;
  }
  list.replaceChildren(...answer.engines.map(row));
  const bad = answer.engines.filter((e) => !e.ok).length;
  const sum = $("#engines-sum");
  if (sum) {
    sum.textContent = bad ? `${bad} not reachable` : `${answer.engines.length} ok`;
    sum.className = "small " + (bad ? "bad" : "muted");
  }
}

// the planning agents as the run last said: roles, off (role -> why), cadences (seconds)
const agents = { roles: [], off: {}, cadence: {}, heard: 0 };

function cadenceText(seconds) {
  if (seconds == null) return "on events";
  return seconds >= 60 && seconds % 60 === 0 ? `every ${seconds / 60} min` : `every ${seconds} s`;
}

/** One agent's switch: a checkbox (on / off) named by its role, and its cadence; the reason
 * it is off in the tooltip. */
function switchRow(role) {
  const li = document.createElement("li");
  const on = !(role in agents.off);
  li.dataset.role = role;
  li.dataset.on = String(on);
  const label = document.createElement("label");
  const box = document.createElement("input");
  box.type = "checkbox";
  box.setAttribute("role", "switch");
  box.checked = on;
  box.setAttribute("aria-label", `${role} on`);
  box.addEventListener("change", () => flip(role, box));
  label.append(box, " " + role);
  li.append(label, text("span", cadenceText(agents.cadence[role]), "small muted cadence"));
  li.title = on ? `${role} is asked by every planning round` : `${role} is off: ${agents.off[role]}`;
  return li;
}

function drawSwitches() {
  const list = $("#agent-switches");
  if (!list) return;
  list.hidden = agents.roles.length === 0;
  list.replaceChildren(...agents.roles.map(switchRow));
}

/** Send AGENT_OFF / AGENT_ON for `role`; the box waits (disabled) for the run's AGENTS
 * event, and goes back to what the run says if the command is refused at the door. */
async function flip(role, box) {
  const wanted = box.checked;
  box.disabled = true;
  try {
    await command(wanted ? "AGENT_ON" : "AGENT_OFF", role);
  } catch (_) {
    drawSwitches(); // refused (no token, no live run): the switch shows the run's state
  }
}

/** GET /api/agent_switches and draw them (kept as they are if the answer is older than an
 * AGENTS event heard meanwhile). */
export async function loadSwitches() {
  const heard = agents.heard;
  let answer;
  try {
    const response = await fetch("/api/agent_switches");
    if (!response.ok) return;
    answer = await response.json();
  } catch (_) {
    return;
  }
  if (!answer.known || heard !== agents.heard) return;
  agents.roles = answer.agents.map((a) => a.role);
  agents.off = Object.fromEntries(answer.agents.filter((a) => !a.on).map((a) => [a.role, a.off_reason || "off"]));
  agents.cadence = Object.fromEntries(answer.agents.filter((a) => a.cadence_s != null).map((a) => [a.role, a.cadence_s]));
  drawSwitches();
}

/** A status of the run: the running one names the planning agents, those off at the start
 * and their cadences. */
export function agentsFromStatus(status) {
  const said = status && status.agents;
  if (!said) return;
  agents.heard += 1;
  agents.roles = [...(said.roles || [])];
  agents.off = { ...(said.off || {}) };
  agents.cadence = { ...(said.cadence_s || {}) };
  drawSwitches();
}

/** An event of the live stream: AGENTS says which agents are off now; a refused switch
 * (COMMAND_IGNORED of AGENT_OFF / AGENT_ON) gives the box back; the running status (in the
 * events' wake) is read by loadSwitches. */
export function agentsFromEvent(e) {
  if (!e) return;
  if (e.kind === "AGENTS") {
    agents.heard += 1;
    agents.off = { ...(e.off || {}) };
    if (!agents.roles.length) loadSwitches();
    drawSwitches();
  } else if (e.kind === "COMMAND_IGNORED" && /^AGENT_(ON|OFF)$/.test(e.command || "")) {
    drawSwitches();
  }
}

/** Show the panel and keep it checked. */
export function initEngines() {
  const panel = $("#engines-panel");
  if (!panel) return;
  panel.hidden = false;
  $("#engines-check")?.addEventListener("click", () => checkEngines());
  checkEngines();
  loadSwitches();
  if (timer === null) timer = setInterval(() => { checkEngines(); loadSwitches(); }, EVERY_MS);
}
