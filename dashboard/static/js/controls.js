/* The controls panel: command buttons (Pause, Resume, Cut and Replan with the operator's
 * words, Reset, and the draft panel's Accept and Reject) and the speed buttons.
 *
 * A control that cannot act now is disabled, and says why in its tooltip and under the
 * buttons (#controls-why): a replay (commands act on a live run only), no websocket to the
 * dashboard, a mission link that cannot carry commands (MQTT), a mission that has ended,
 * Pause while paused and Resume while not. The edit tools go with them. */

import { api, command } from "./api.js";
import { $ } from "./dom.js";
import { state } from "./store.js";
import { toast } from "./toast.js";

const ENDED = new Set(["ended", "crashed", "interrupted"]);

/** Why no control can act now ("" when they can). */
export function blockedReason() {
  if (state.replay) return "a replay: commands act on a live run only";
  const st = state.status && state.status.state;
  if (st && ENDED.has(st)) return `the mission has ${st === "ended" ? "ended" : st === "crashed" ? "crashed" : "been interrupted"}`;
  if (state.wsState !== "open") return `not connected to the dashboard (websocket ${state.wsState})`;
  const link = state.link;
  if (link && link.state !== "local" && !link.commands) return "commands cannot reach the mission now: " + (link.reason || `link ${link.state}`);
  return "";
}

function mode() {
  const tel = state.telemetry || {}, scene = state.scene || {};
  return tel.mode || scene.mode || "";
}

/** Why this one control cannot act ("" when it can). */
function reasonFor(b, blocked) {
  if (blocked) return blocked;
  if (b.dataset.command === "PAUSE" && mode() === "PAUSED") return "already paused";
  if (b.dataset.command === "RESUME" && mode() !== "PAUSED") return "not paused";
  return "";
}

function setBlocked(node, why) {
  if (!("origTitle" in node.dataset)) node.dataset.origTitle = node.title || "";
  const disabled = Boolean(why);
  if (node.disabled !== disabled) node.disabled = disabled;
  const title = why ? `disabled: ${why}` : node.dataset.origTitle;
  if (node.title !== title) node.title = title;
}

/** Enable or disable every control by what the page knows now (each render pass). */
export function renderControls() {
  const blocked = blockedReason();
  for (const b of document.querySelectorAll("button[data-command], button[data-speed]")) setBlocked(b, reasonFor(b, blocked));
  const text = $("#cmd-text");
  if (text) setBlocked(text, blocked);
  const tools = $("#tools");
  if (tools) setBlocked(tools, blocked);
  const why = $("#controls-why");
  if (why) {
    const said = blocked ? `controls disabled: ${blocked}` : "";
    if (why.textContent !== said) why.textContent = said;
    why.hidden = !blocked;
  }
}

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
