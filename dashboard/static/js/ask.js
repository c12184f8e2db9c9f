/* The question box: a question about the live mission goes to POST /api/ask, which waits
 * for the coordinator's answer; the answer and its numbers are shown under the box, then the
 * answer's suggested next questions (`follow_ups`, seed 004) as buttons: a click asks it. */

import { api } from "./api.js";
import { $ } from "./dom.js";

/** Ask `q` and show the answer, its numbers and its follow-ups under the box. */
async function ask(q) {
  const out = $("#ask-answer");
  out.textContent = "…";
  try {
    const a = await api("POST", "/api/ask", { question: q });
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
