/* The agent trace tree: agent runs by run_id (at most 1000 kept), each under its parent,
 * newest roots first. Each run reads as a line: its role, its verdict (applied, not
 * applied, error), engine, time and tick; opened, what it proposed in words (by role) and
 * why it was applied or not (the executive's decision, the round's reasons, clamps, the
 * error), with the raw JSON behind its own toggle. */

import { $ } from "./dom.js";
import { label } from "./format.js";
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

/** Draw the tree again, keeping open what the operator opened (runs and raw JSON). */
export function renderAgents() {
  const box = $("#agents");
  const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.runId || "raw:" + d.dataset.rawOf));
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

const list = (v) => (Array.isArray(v) ? v : []);
const route = (ids) => list(ids).join(" ");
const cut = (text, n = 160) => (text && text.length > n ? text.slice(0, n - 1) + "…" : text || "");

/** The proposal in one line, by role (whatever the engine). */
export function proposalSummary(agent, out) {
  if (!out || typeof out !== "object") return "";
  if (out.skipped) return "not asked"; // switched off, or not due: whyText says which
  switch (agent) {
    case "strategist":
      return `${out.request_type || "?"} request, ${out.mode || "?"} mode, feasibility ${out.feasibility || "?"}`
        + (out.constraints_summary ? ` — ${out.constraints_summary}` : "");
    case "allocator": {
      const a = Object.entries(out.assignments || {}).map(([d, ts]) => `${label(d)}: ${route(ts) || "none"}`);
      const ex = list(out.excluded).map((e) => `${e.target} (${e.reason})`);
      return `${out.strategy_used || "allocation"}: ${a.join(" · ")}` + (ex.length ? `; leaves out ${ex.join(", ")}` : "");
    }
    case "route_optimizer": {
      const r = Object.entries(out.routes || {}).map(([d, ids]) => `${label(d)}: ${route(ids)}`);
      return r.join(" · ") + (out.total_points !== undefined ? ` — ${out.total_points} pts, ${Number(out.total_fuel || 0).toFixed(1)} km` : "");
    }
    case "critic":
      return `${out.final_verdict || ""}: ${cut(out.review)}` + (list(out.issues).length ? ` (${out.issues.length} issue(s))` : "");
    case "planning_round":
      return `${out.trigger || "round"}: ${out.total_points ?? "?"} pts (baseline ${out.baseline_points ?? "?"})`
        + (out.agent_applied ? ", the agents' plan" : ", the algorithmic plan");
    default:
      if (out.answer) return cut(String(out.answer));
      if (out.intent) return `intent ${out.intent}`;
      return cut(Object.keys(out).slice(0, 6).join(", "));
  }
}

/** Why it was applied or not: the executive's decision, the round's reasons, clamps, errors. */
export function whyText(r) {
  const out = r.validated_output || {};
  const bits = [];
  if (r.error) bits.push(`error: ${r.error}`);
  if (out.outcome && out.outcome.decision) bits.push(out.outcome.decision);
  if (out.why) bits.push(String(out.why));
  bits.push(...list(out.reasons).map(String));
  bits.push(...list(r.clamp_actions).map((a) => `clamped: ${a}`));
  if (r.agent === "critic" && out.final_verdict) bits.push(`critic's verdict ${out.final_verdict} (advisory)`);
  return bits.join("; ");
}

function line(cls, name, text) {
  const div = document.createElement("div");
  div.className = cls;
  const b = document.createElement("b"); b.textContent = name + " ";
  div.append(b, text);
  return div;
}

function agentNode(n, open) {
  const r = n.r;
  const d = document.createElement("details");
  d.dataset.runId = r.run_id;
  d.dataset.agent = r.agent;
  if (open.has(r.run_id)) d.open = true;
  const s = document.createElement("summary");
  const tokens = r.tokens_in || r.tokens_out ? ` ${r.tokens_in ?? 0}/${r.tokens_out ?? 0} tok` : "";
  const name = document.createElement("span"); name.className = "agent"; name.textContent = r.agent;
  const verdict = document.createElement("span");
  verdict.className = "verdict " + (r.error ? "error" : r.applied ? "applied" : "not-applied");
  verdict.textContent = r.error ? "error" : r.applied ? "applied" : "not applied";
  const facts = document.createElement("span");
  facts.className = "facts";
  facts.textContent = ` ${r.engine}${r.model ? "/" + r.model : ""} · ${Math.round(r.duration_ms || 0)} ms${tokens}` +
    (r.tick !== null && r.tick !== undefined ? ` · tick ${r.tick}` : "");
  s.append(name, " ", verdict, facts);
  d.appendChild(s);
  const summary = proposalSummary(r.agent, r.validated_output);
  if (summary) d.appendChild(line("proposal", "proposal", summary));
  const why = whyText(r);
  if (why) d.appendChild(line("why", r.applied ? "applied:" : "why not:", why));
  if (r.validated_output || r.raw_output) {
    const raw = document.createElement("details");
    raw.className = "raw";
    raw.dataset.rawOf = r.run_id;
    if (open.has("raw:" + r.run_id)) raw.open = true;
    const rs = document.createElement("summary"); rs.textContent = "raw JSON";
    const pre = document.createElement("pre");
    pre.textContent = JSON.stringify({ validated_output: r.validated_output ?? null, raw_output: r.raw_output ?? null }, null, 2);
    raw.append(rs, pre);
    d.appendChild(raw);
  }
  for (const c of n.children) d.appendChild(agentNode(c, open));
  return d;
}
