/* The run picker: the stored runs (GET /api/runs), newest first, PAGE at a time, filtered by
 * status and scenario, over the page when the address ends in #runs (the header's Runs
 * button; Close or Esc takes it away). A click on a run opens its replay (/?replay=RUN_ID);
 * a click on a parent opens the parent's. Tick two runs (across pages) and Compare opens them
 * side by side (/?compare=A,B; A the parent when one is the other's fork, else the first
 * ticked). The live view keeps running beneath it. A dashboard with no live run (isr
 * dashboard on a trace store) opens on this list. */

import { api } from "./api.js";
import { $ } from "./dom.js";
import { fmtTime } from "./format.js";

const PAGE = 20;
let offset = 0;

const replayUrl = (id) => `/?replay=${encodeURIComponent(id)}`;
const picked = new Map(); // run id -> its parent's id (null): the runs ticked to compare, in order

function pickedChanged() {
  const button = $("#runs-compare");
  button.disabled = picked.size !== 2;
  button.textContent = picked.size ? `Compare (${picked.size}/2)` : "Compare";
}

function compareUrl() {
  let [a, b] = [...picked.keys()];
  if (picked.get(a) === b) [a, b] = [b, a]; // the parent first
  return `/?compare=${encodeURIComponent(a)},${encodeURIComponent(b)}`;
}

function cell(tr, text, cls) {
  const td = document.createElement("td");
  if (cls) td.className = cls;
  td.textContent = text;
  tr.appendChild(td);
  return td;
}

async function load() {
  const params = new URLSearchParams({ limit: String(PAGE), offset: String(offset) });
  const status = $("#runs-status").value;
  const scenario = $("#runs-scenario").value.trim();
  if (status) params.set("status", status);
  if (scenario) params.set("scenario", scenario);
  const body = $("#runs-body");
  const empty = $("#runs-empty");
  let answer;
  try {
    answer = await api("GET", "/api/runs?" + params.toString());
  } catch (err) {
    body.replaceChildren();
    empty.hidden = false;
    empty.textContent = err.status === 404
      ? "this dashboard has no trace store (start it with --db sqlite:///path.db)"
      : `the runs cannot be listed: ${err.message}`;
    return;
  }
  const runs = answer.runs || [];
  body.replaceChildren();
  for (const r of runs) {
    const tr = document.createElement("tr");
    tr.dataset.runId = r.run_id;
    tr.title = `open the replay of ${r.run_id}`;
    const pick = cell(tr, "", "pick");
    const box = document.createElement("input");
    box.type = "checkbox";
    box.className = "run-pick";
    box.title = "tick two runs to compare them";
    box.checked = picked.has(r.run_id);
    box.addEventListener("click", (ev) => ev.stopPropagation());
    box.addEventListener("change", () => {
      if (box.checked) {
        picked.set(r.run_id, r.parent_run_id || null);
        // a third tick replaces the oldest
        while (picked.size > 2) picked.delete(picked.keys().next().value);
      } else picked.delete(r.run_id);
      pickedChanged();
      for (const other of $("#runs-body").querySelectorAll("input.run-pick"))
        other.checked = picked.has(other.closest("tr").dataset.runId);
    });
    pick.addEventListener("click", (ev) => ev.stopPropagation());
    pick.appendChild(box);
    cell(tr, r.run_id.slice(0, 12)).title = r.run_id;
    cell(tr, r.scenario || "–");
    cell(tr, r.started_at ? new Date(r.started_at * 1000).toLocaleString() : "–");
    cell(tr, r.duration_s === null || r.duration_s === undefined ? "–" : fmtTime(r.duration_s));
    cell(tr, r.status, "st-" + r.status);
    cell(tr, r.points === null || r.points === undefined ? "–" : String(r.points));
    cell(tr, String(r.lost ?? "–"));
    cell(tr, String(r.replans ?? "–"));
    cell(tr, r.engine || "–");
    const parent = cell(tr, "");
    if (r.parent_run_id) {
      const a = document.createElement("a");
      a.href = replayUrl(r.parent_run_id);
      a.textContent = r.parent_run_id.slice(0, 8) + (r.fork && r.fork.tick !== undefined ? ` @${r.fork.tick}` : "");
      a.addEventListener("click", (ev) => ev.stopPropagation());
      parent.appendChild(a);
    } else parent.textContent = "–";
    tr.addEventListener("click", () => { location.assign(replayUrl(r.run_id)); });
    body.appendChild(tr);
  }
  empty.hidden = runs.length > 0;
  if (!runs.length) empty.textContent = offset ? "no older runs" : "no stored runs (yet)";
  $("#runs-page").textContent = runs.length ? `${offset + 1}–${offset + runs.length}` : "";
  $("#runs-prev").disabled = offset === 0;
  $("#runs-next").disabled = runs.length < PAGE;
}

function show() {
  const open = location.hash === "#runs";
  $("#runs-panel").hidden = !open;
  $("#btn-runs").classList.toggle("active", open);
  if (open) load();
}

function close() {
  history.replaceState(null, "", location.pathname + location.search);
  show();
}

let landed = false;

/** A dashboard with no live run opens on its stored runs (once per page: Close keeps the
 * empty live view, which says where the runs are). */
export function openRunsOnLanding() {
  if (landed || location.hash === "#runs") return;
  landed = true;
  history.replaceState(null, "", location.pathname + location.search + "#runs");
  show();
}

/** The Runs button, the filter and the pages; the panel follows the address's #runs. */
export function initRuns() {
  $("#btn-runs").addEventListener("click", () => {
    if (location.hash === "#runs") close(); else location.hash = "runs";
  });
  $("#btn-live").addEventListener("click", () => location.assign("/"));
  $("#runs-close").addEventListener("click", close);
  $("#runs-compare").addEventListener("click", () => { if (picked.size === 2) location.assign(compareUrl()); });
  pickedChanged();
  $("#runs-panel").addEventListener("click", (ev) => { if (ev.target.id === "runs-panel") close(); });
  document.addEventListener("keydown", (ev) => { if (ev.key === "Escape" && !$("#runs-panel").hidden) close(); });
  $("#runs-filter").addEventListener("submit", (ev) => { ev.preventDefault(); offset = 0; load(); });
  $("#runs-status").addEventListener("change", () => { offset = 0; load(); });
  $("#runs-prev").addEventListener("click", () => { offset = Math.max(0, offset - PAGE); load(); });
  $("#runs-next").addEventListener("click", () => { offset += PAGE; load(); });
  window.addEventListener("hashchange", show);
  show();
}
