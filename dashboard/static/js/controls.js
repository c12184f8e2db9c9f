/* The controls panel: command buttons (Pause, Resume, Cut and Replan with the operator's
 * words, Reset, and the draft panel's Accept and Reject) and the speed buttons. */

import { api, command } from "./api.js";
import { $ } from "./dom.js";
import { toast } from "./toast.js";

/** Every button[data-command] sends its command; every button[data-speed] its pace. */
export function initControls() {
  for (const b of document.querySelectorAll("button[data-command]")) {
    b.addEventListener("click", async () => {
      const name = b.dataset.command;
      const words = ["CUT", "REPLAN"].includes(name) ? $("#cmd-text").value.trim() : "";
      try {
        await command(name, words || undefined);
        toast(`${name} sent`, "info");
        if (words) $("#cmd-text").value = "";
      } catch (_) { /* toast shown */ }
    });
  }
  for (const b of document.querySelectorAll("button[data-speed]")) {
    b.addEventListener("click", async () => {
      const v = b.dataset.speed;
      try {
        await api("POST", "/api/speed", { speed: v === "max" ? null : Number(v) });
        toast(`speed ${v === "max" ? "max" : v + "x"} sent`, "info");
      } catch (_) { /* toast shown */ }
    });
  }
}
