/* The controls panel: command buttons (Pause, Resume, Cut and Replan with the operator's
 * words, Reset, and the draft panel's Accept and Reject) and the speed buttons; on a live
 * fork, what it is a fork of (with a link to its parent's replay on the dashboard that
 * started it) and Stop.
 *
 * A control that cannot act now is disabled, and says why in its tooltip and under the
 * buttons (#controls-why): no live run (a dashboard of stored runs, or a mission still
 * starting), a replay (commands act on a live run only), no websocket to the dashboard, a
 * mission link that cannot carry commands (MQTT), a mission that has ended, Pause while
 * paused and Resume while not. The edit tools go with them. Reset, Reject and Stop ask for a
 * confirmation first (confirm.js). */

import { api, command } from "./api.js";
import { confirmAction } from "./confirm.js";
import { $ } from "./dom.js";
import { fmtTime } from "./format.js";
import { TERMINAL, startupPhase } from "./run_state.js";
import { state } from "./store.js";
import { toast } from "./toast.js";

/** Why no control can act now ("" when they can). */
export function blockedReason() {
  if (state.replay) return "a replay: commands act on a live run only";
  if (state.compare) return "a comparison of stored runs: commands act on a live run only";
  if (state.live === false) return "no live run: this dashboard serves stored runs (open one from Runs)";
  const st = state.status && state.status.state;
  if (st && TERMINAL.has(st)) return `the mission has ${st === "ended" ? "ended" : st === "crashed" ? "crashed" : st === "failed" ? "failed" : "been interrupted"}`;
  if (state.wsState !== "open") return `not connected to the dashboard (websocket ${state.wsState})`;
  if (!state.runId) return "no live run yet: waiting for the mission to start";
  if (startupPhase()) return "the mission is starting: commands wait until its first plan";
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

/** The fork row: what this live run forks, a link back, Stop (a live fork only). */
function renderFork(blocked) {
  const row = $("#fork-row");
  const fork = (state.scene || {}).fork;
  row.hidden = !fork || Boolean(state.replay) || Boolean(state.compare);
  if (row.hidden) return;
  const hz = (state.scene && state.scene.tick_hz) || 20;
  const what = `fork of ${String(fork.parent).slice(0, 8)} at ${fmtTime((fork.tick + 1) / hz)}`;
  if ($("#fork-what").textContent !== what) $("#fork-what").textContent = what;
  const back = $("#fork-back");
  back.hidden = !state.backUrl;
  if (state.backUrl) {
    const over = state.status && TERMINAL.has(state.status.state);
    const href = `${state.backUrl}/?replay=${encodeURIComponent(over ? state.runId : fork.parent)}`;
    if (back.getAttribute("href") !== href) back.setAttribute("href", href);
    back.textContent = over ? "this fork's replay" : "parent's replay";
  }
  setBlocked($("#btn-stop"), blocked);
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
  renderFork(blocked);
}

/** What a command does, asked before the ones that cannot be undone. */
const CONFIRM = {
  RESET: {
    title: "Reset the plan?",
    text: "Drafts and the operator's constraints are dropped and the remainder is planned again from scratch.",
    ok: "Reset",
  },
  REJECT: {
    title: "Reject the draft?",
    text: "The draft is dropped; the plan in force flies on as it is.",
    ok: "Reject",
  },
};

/** Every button[data-command] sends its command; every button[data-speed] its pace; Stop
 * ends a live fork's mission. */
export function initControls() {
  for (const b of document.querySelectorAll("button[data-command]")) {
    b.addEventListener("click", async () => {
      const name = b.dataset.command;
      if (CONFIRM[name] && !(await confirmAction(CONFIRM[name]))) return;
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
  $("#btn-stop").addEventListener("click", async () => {
    const sure = await confirmAction({
      title: "Stop this fork?",
      text: "Its mission ends now: it is recorded as ended, with its outcome so far, and its process ends.",
      ok: "Stop",
    });
    if (!sure) return;
    try {
      await api("POST", "/api/stop", { run_id: state.runId });
      toast("stop sent", "info");
    } catch (_) { /* toast shown */ }
  });
}
