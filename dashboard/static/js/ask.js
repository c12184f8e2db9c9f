/* The question box: a question about the live mission goes to POST /api/ask, which waits
 * for the coordinator's answer; the answer and its numbers are shown under the box. */

import { api } from "./api.js";
import { $ } from "./dom.js";

/** Send the question when the form is submitted, and show the answer. */
export function initAsk() {
  $("#ask-form").addEventListener("submit", async (ev) => {
    ev.preventDefault();
    const q = $("#ask-text").value.trim();
    if (!q) return;
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
    } catch (err) {
      out.textContent = "";
    }
  });
}
