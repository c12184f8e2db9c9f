/* The engines panel: each agent engine of the live run (the roles it answers for, its model
 * and server) with its health from GET /api/engines: ok and the reachability call's latency,
 * or the reason it is not reachable. Checked when the page loads, every minute after, and on
 * the panel's "check" button (the server asks each engine at most once per few seconds,
 * whoever asks). Shown on a live page only (a replay or a compare runs no engines). */

import { $ } from "./dom.js";

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

/** Show the panel and keep it checked. */
export function initEngines() {
  const panel = $("#engines-panel");
  if (!panel) return;
  panel.hidden = false;
  $("#engines-check")?.addEventListener("click", () => checkEngines());
  checkEngines();
  if (timer === null) timer = setInterval(checkEngines, EVERY_MS);
}
