/* The agent trace tree: agent runs by run_id (at most 1000 kept), each under its parent,
 * newest roots first; a run's <details> opens on its validated output and clamp actions. */

import { $ } from "./dom.js";
import { schedule, state } from "./store.js";

/** Keep one agent run (a newer record of the same run replaces it) and redraw the tree. */
export function addAgent(record) {
  if (!record || !record.run_id) return;
  state.agents.delete(record.run_id);
  state.agents.set(record.run_id, record);
  while (state.agents.size > 1000) state.agents.delete(state.agents.keys().next().value);
  state.agentsDirty = true;
  schedule();
}

/** Draw the tree again, keeping open what the operator opened. */
export function renderAgents() {
  const box = $("#agents");
  const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.runId));
  const nodes = new Map();
  for (const [id, r] of state.agents) nodes.set(id, { r, children: [] });
  const roots = [];
  for (const [id, n] of nodes) {
    const parent = n.r.parent_run_id;
    if (parent && parent !== id && nodes.has(parent)) nodes.get(parent).children.push(n);
    else roots.push(n);
  }
  box.replaceChildren();
  if (!roots.length) { box.innerHTML = '<p class="muted">no agent runs yet</p>'; return; }
  for (const n of roots.reverse()) box.appendChild(agentNode(n, open));
}

function agentNode(n, open) {
  const r = n.r;
  const d = document.createElement("details");
  d.dataset.runId = r.run_id;
  if (open.has(r.run_id)) d.open = true;
  const s = document.createElement("summary");
  const tokens = r.tokens_in || r.tokens_out ? ` ${r.tokens_in ?? 0}/${r.tokens_out ?? 0} tok` : "";
  const name = document.createElement("span"); name.className = "agent"; name.textContent = r.agent;
  const facts = document.createElement("span");
  facts.textContent = ` ${r.engine}${r.model ? "/" + r.model : ""} · ${Math.round(r.duration_ms || 0)} ms${tokens}` +
    (r.tick !== null && r.tick !== undefined ? ` · tick ${r.tick}` : "") + " · ";
  const verdict = document.createElement("span");
  verdict.className = r.error ? "error" : r.applied ? "applied" : "not-applied";
  verdict.textContent = r.error ? "error: " + r.error : r.applied ? "applied" : "not applied";
  s.append(name, facts, verdict);
  d.appendChild(s);
  if (r.validated_output) {
    const pre = document.createElement("pre");
    pre.textContent = JSON.stringify(r.validated_output, null, 2);
    d.appendChild(pre);
  }
  if ((r.clamp_actions || []).length) {
    const pre = document.createElement("pre");
    pre.textContent = "clamped: " + r.clamp_actions.join("\n");
    d.appendChild(pre);
  }
  for (const c of n.children) d.appendChild(agentNode(c, open));
  return d;
}
