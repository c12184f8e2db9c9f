/* The question box: a question about the live mission goes to POST /api/ask/stream, whose
 * events (seed 004's flow: plan, thinking, tool calls, message deltas, done | error) are
 * shown live under the box as they arrive; at `done` the answer and its numbers replace
 * them, then the answer's suggested next questions (`follow_ups`, seed 004) as buttons: a
 * click asks it. The stages stay folded under the answer. */

import { apiStream } from "./api.js";
import { $ } from "./dom.js";

/** One line for a stage (null: not listed; message deltas grow the answer instead). */
function stageLine(name, d) {
  switch (name) {
    case "plan": return `plan: ${d.intent}` + (d.orders.length ? ` — ${d.orders.join("; ")}` : "")
      + (d.errors.length ? ` — ${d.errors.join("; ")}` : "");
    case "thinking": return `thinking: ${d.text}`;
    case "tool_call_start": return `${d.tool}…`;
    case "tool_call_end": return `${d.tool}: ${d.ok ? "done" : d.error || "failed"} (${Math.round(d.duration_ms)} ms)`;
    case "error": return `error: ${d.reason}`;
    default: return null;
  }
}

/** The answer, its numbers and its follow-ups, as POST /api/ask gives them. */
function showAnswer(out, a, stages) {
  out.textContent = a.answer || "(no answer)";
  const numbers = Array.isArray(a.numbers) ? a.numbers
    : Object.entries(a.numbers || {}).map(([label, value]) => ({ label, value }));
  if (numbers.length) {
    const n = document.createElement("div"); n.className = "numbers";
    n.textContent = numbers.map((x) => {
      const v = typeof x.value === "number" ? Math.round(x.value * 10) / 10 : x.value;
      return `${x.label}: ${v}${x.unit ? " " + x.unit : ""}`;
    }).join(" · ");
    out.appendChild(n);
  }
  const next = Array.isArray(a.follow_ups) ? a.follow_ups : [];
  if (next.length) {
    const row = document.createElement("div"); row.className = "follow-ups";
    for (const text of next) {
      const b = document.createElement("button");
      b.type = "button"; b.className = "follow-up"; b.textContent = text;
      b.addEventListener("click", () => { $("#ask-text").value = text; ask(text); });
      row.appendChild(b);
    }
    out.appendChild(row);
  }
  const fold = document.createElement("details"); fold.className = "ask-stages";
  const summary = document.createElement("summary"); summary.textContent = "stages";
  fold.appendChild(summary); fold.appendChild(stages);
  out.appendChild(fold);
}

/** Ask `q`, show its stages as they arrive, then the answer. */
async function ask(q) {
  const out = $("#ask-answer");
  out.textContent = "";
  const stages = document.createElement("ol"); stages.className = "ask-stages";
  const text = document.createElement("div"); text.className = "ask-partial";
  out.append(stages, text);
  try {
    await apiStream("/api/ask/stream", { question: q }, (name, d) => {
      if (name === "message") { text.textContent += d.delta; return; }
      if (name === "done") { showAnswer(out, d.answer, stages); return; }
      const line = stageLine(name, d);
      if (line === null) return;
      const li = document.createElement("li");
      li.className = `stage stage-${name}`; li.textContent = line;
      stages.appendChild(li);
    });
  } catch (err) {
    out.textContent = "";
  }
}

/** Send the question when the form is submitted, and show the answer. */
export function initAsk() {
  $("#ask-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const q = $("#ask-text").value.trim();
    if (q) ask(q);
  });
}
