/* The draft review panel: shown while a draft waits for the operator (review mode).
 *
 * It says first why the draft waits (the hazard of the plan in force it answers: a known
 * SAM ahead of a drone with a live countdown to when the plan would enter it and to when
 * the safety layer acts (hazard.js, redrawn every frame from the mission time), fuel that
 * no longer covers a plan; then the change that asked for it). It shows the draft's points still to collect against the plan in force (over the
 * remainder only: targets already collected are neither added nor removed), a clock of how
 * long it has waited (mission time; the policy's timeout when one is set), and, once the
 * drones have flown past the draft's cut, the same intent rebased onto a recent state:
 * what ACCEPT would fly, with any target the rebase had to drop and why. The map draws the
 * rebased routes of the drones the draft changes only. Accept and Reject are command buttons (controls.js; Reject asks first). An
 * ended run's panel is closed. */

import { $ } from "./dom.js";
import { label } from "./format.js";
import { hazardWords } from "./hazard.js";
import { runOver } from "./run_state.js";

const sign = (v, digits = 0) => (v >= 0 ? "+" : "") + Number(v).toFixed(digits);

function clock(seconds) {
  const s = Math.max(0, Math.round(seconds));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

function dropped(entries) {
  return Object.entries(entries || {}).map(([t, why]) => `${t} (${why})`).join(", ");
}

let counting = []; // the hazards shown: {h, enters, acts} (their words' elements)

/** The hazards' countdowns at the mission time the page shows: every render pass (a
 * telemetry frame each tick), not only when a scene arrives. */
export function renderDraftCountdown() {
  for (const { h, enters, acts } of counting) {
    const w = hazardWords(h);
    if (enters.textContent !== w.enters) enters.textContent = w.enters;
    if (acts.textContent !== w.acts) acts.textContent = w.acts;
  }
}

/** Show or hide the panel for the scene's draft: closed once the run is over (nothing
 * waits for review any more: the last scene may still carry the draft nobody answered). */
export function renderDraftPanel(scene) {
  const panel = $("#draft");
  const draft = runOver() ? null : scene.draft;
  panel.hidden = !draft;
  counting = [];
  if (!draft) return;
  panel.classList.toggle("urgent", !!draft.urgent);  // a fix waiting, not an improvement
  $("#draft-urgent").hidden = !draft.urgent;
  const why = $("#draft-why");
  why.replaceChildren();
  for (const h of draft.hazards || []) {  // the SAMs ahead first, counting down
    const li = document.createElement("li");
    li.dataset.droneId = h.drone;
    li.dataset.sam = h.sam;
    const enters = document.createElement("span"); enters.className = "enters";
    const acts = document.createElement("span"); acts.className = "acts";
    li.append(enters, "; ", acts);
    why.appendChild(li);
    counting.push({ h, enters, acts });
  }
  renderDraftCountdown();
  for (const reason of draft.why || []) {  // then fuel short of a plan, then its trigger
    const li = document.createElement("li");
    li.textContent = reason;
    why.appendChild(li);
  }
  const diff = draft.diff || {};
  const origin = draft.origin === "agents" ? "the agents' proposal" : "a replan";
  $("#draft-summary").textContent =
    `${Number(diff.points_drafted ?? draft.points).toFixed(0)} points still to collect`
    + ` (${sign(diff.points || 0)} against the plan in force), from ${origin}`;
  const timeout = draft.timeout_s ? ` of ${clock(draft.timeout_s)}` : "";
  $("#draft-clock").textContent = `waiting ${clock(draft.waited_s || 0)}${timeout} (mission time)`;
  const rebased = $("#draft-rebased");
  rebased.replaceChildren();
  if (draft.rebased) {
    const lost = dropped(draft.rebased.dropped);
    rebased.append(`rebased onto tick ${draft.rebased.cut_tick}: ${Number(draft.rebased.points).toFixed(0)} points, `
      + `fuel ${Number(draft.rebased.fuel).toFixed(1)} km`);
    if (lost) {
      const span = document.createElement("span");
      span.className = "minus";
      span.textContent = ` — would drop ${lost}`;
      rebased.append(span);
    }
  } else if (Object.keys(draft.dropped || {}).length) {
    rebased.textContent = `rebased: dropped ${dropped(draft.dropped)}`;
  }
  const list = $("#draft-diff");
  list.replaceChildren();
  const routes = diff.routes || {};
  if (!Object.keys(routes).length) {
    const li = document.createElement("li"); li.textContent = "same targets per drone"; list.appendChild(li);
  }
  for (const [id, r] of Object.entries(routes)) {
    const li = document.createElement("li");
    li.dataset.droneId = id;
    const name = document.createElement("b"); name.textContent = label(id);
    li.append(name, " ");
    const add = document.createElement("span"); add.className = "plus";
    add.textContent = (r.added || []).length ? "+" + r.added.join(" +") + " " : "";
    const rem = document.createElement("span"); rem.className = "minus";
    rem.textContent = (r.removed || []).length ? "−" + r.removed.join(" −") : "";
    li.append(add, rem);
    if (!r.added.length && !r.removed.length) li.append("reordered");
    list.appendChild(li);
  }
}
