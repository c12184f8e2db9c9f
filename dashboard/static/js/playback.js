/* The playback bar of the replay: the track (click or drag to seek; the playhead, the played
 * part, the loop range, and one marker per event of note, coloured by category: a click on a
 * marker jumps to its tick), the buttons (start, back 1 s, back 1 tick, play / pause,
 * forward 1 tick, 1 s, end; loop in / out / none; Fork here), the speed, a mission time to
 * type (mm:ss, h:mm:ss or seconds), and the keyboard: space play / pause, arrows one tick,
 * shift+arrows one second, [ and ] the loop's in and out, Home and End. */

import { $ } from "./dom.js";
import { fmtTime } from "./format.js";
import {
  R, clearLoop, forkHere, seek, setLoopIn, setLoopOut, setSpeed, step, togglePlay,
} from "./replay.js";
import { state } from "./store.js";
import { toast } from "./toast.js";

export const CATEGORIES = {
  edit: "edit", detection: "detection", loss: "loss", replan: "replan", commit: "commit",
  review: "review", safety: "safety", operator: "operator", fault: "fault",
};

/** Mission time with tenths: m:ss.s */
export function fmtMission(tick) {
  const s = tick / R.hz;
  return fmtTime(s) + "." + Math.floor((s * 10) % 10);
}

/** A typed mission time as a tick: "m:ss", "h:mm:ss" (with decimals) or seconds; null when
 * it reads as none of them. */
export function parseTime(text, hz) {
  const t = String(text).trim().replace(/s$/, "");
  if (!t) return null;
  const parts = t.split(":");
  if (parts.length > 3 || parts.some((p) => !/^\d+(\.\d*)?$/.test(p))) return null;
  const seconds = parts.reduce((acc, p) => acc * 60 + Number(p), 0);
  return Math.round(seconds * hz);
}

const pct = (tick) => (R.lastTick > 0 ? (100 * tick) / R.lastTick : 0) + "%";

function tickAtX(clientX) {
  const box = $("#pb-track").getBoundingClientRect();
  const f = Math.min(1, Math.max(0, (clientX - box.left) / Math.max(1, box.width)));
  return Math.round(f * R.lastTick);
}

/** The buttons, the track, the time field and the keys. */
export function initPlayback() {
  const on = (sel, fn) => $(sel).addEventListener("click", (ev) => { fn(ev); ev.currentTarget.blur(); });
  on("#pb-play", () => togglePlay());
  on("#pb-home", (ev) => step(-R.tick, ev.timeStamp));
  on("#pb-end", (ev) => step(R.lastTick - R.tick, ev.timeStamp));
  on("#pb-back", (ev) => step(-1, ev.timeStamp));
  on("#pb-fwd", (ev) => step(1, ev.timeStamp));
  on("#pb-back-s", (ev) => step(-Math.round(R.hz), ev.timeStamp));
  on("#pb-fwd-s", (ev) => step(Math.round(R.hz), ev.timeStamp));
  on("#pb-in", () => setLoopIn());
  on("#pb-out", () => setLoopOut());
  on("#pb-loop-clear", () => clearLoop());
  on("#pb-fork", () => forkHere());
  $("#pb-speed").addEventListener("change", (ev) => setSpeed(ev.target.value));
  $("#pb-seek-form").addEventListener("submit", (ev) => {
    ev.preventDefault();
    const field = $("#pb-time");
    const tick = parseTime(field.value, R.hz);
    if (tick === null) { toast("a mission time reads mm:ss, h:mm:ss or seconds, e.g. 9:30 or 570"); return; }
    seek(tick, ev.timeStamp);
    field.blur();
  });

  const track = $("#pb-track");
  let dragging = false;
  track.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    const marker = ev.target.closest(".pb-marker");
    if (marker) { seek(Number(marker.dataset.tick), ev.timeStamp); return; }
    dragging = true;
    track.setPointerCapture(ev.pointerId);
    seek(tickAtX(ev.clientX), ev.timeStamp);
  });
  track.addEventListener("pointermove", (ev) => {
    if (dragging) seek(tickAtX(ev.clientX), ev.timeStamp);
  });
  const stop = () => { dragging = false; };
  track.addEventListener("pointerup", stop);
  track.addEventListener("pointercancel", stop);

  document.addEventListener("keydown", (ev) => {
    if (!state.replay || !R.runId || ev.ctrlKey || ev.metaKey || ev.altKey) return;
    const target = ev.target;
    if (target && (["INPUT", "SELECT", "TEXTAREA"].includes(target.tagName) || target.isContentEditable)) return;
    if (!$("#runs-panel").hidden) return;
    const second = Math.round(R.hz);
    switch (ev.key) {
      case " ": togglePlay(); break;
      case "ArrowLeft": step(ev.shiftKey ? -second : -1, ev.timeStamp); break;
      case "ArrowRight": step(ev.shiftKey ? second : 1, ev.timeStamp); break;
      case "[": setLoopIn(); break;
      case "]": setLoopOut(); break;
      case "Home": step(-R.tick, ev.timeStamp); break;
      case "End": step(R.lastTick - R.tick, ev.timeStamp); break;
      default: return;
    }
    ev.preventDefault();
  });
}

/** The markers and the legend again (a new run). */
export function markersChanged() {
  const box = $("#pb-markers");
  box.replaceChildren();
  const seen = new Set();
  // drawn in this order, the rarer and graver on top where markers overlap
  const z = ["commit", "replan", "review", "operator", "edit", "fault", "safety", "loss", "detection"];
  const order = (m) => z.indexOf(CATEGORIES[m.category] || "fault");
  for (const m of [...R.markers].sort((a, b) => order(a) - order(b))) {
    const cat = CATEGORIES[m.category] || "fault";
    seen.add(cat);
    const d = document.createElement("div");
    d.className = "pb-marker cat-" + cat;
    d.dataset.tick = m.tick;
    d.dataset.category = cat;
    d.dataset.kind = m.kind;
    d.title = `${fmtMission(m.tick)} (tick ${m.tick}): ${m.label}`;
    d.style.left = pct(m.tick);
    box.appendChild(d);
  }
  const legend = $("#pb-legend");
  legend.replaceChildren();
  for (const cat of Object.keys(CATEGORIES)) {
    const span = document.createElement("span");
    span.className = seen.has(cat) ? "" : "muted";
    const i = document.createElement("i");
    i.className = "cat-" + cat;
    span.append(i, cat + (seen.has(cat) ? "" : " (none)"));
    legend.appendChild(span);
  }
}

/** The playhead, the played part, the loop, the clock and the play button. */
export function renderPlayback() {
  $("#pb-head").style.left = pct(R.tick);
  $("#pb-fill").style.width = pct(R.tick);
  const loop = $("#pb-loop");
  const looping = R.loopIn !== null && R.loopOut !== null;
  loop.classList.toggle("on", looping);
  if (looping) { loop.style.left = pct(R.loopIn); loop.style.width = `calc(${pct(R.loopOut)} - ${pct(R.loopIn)})`; }
  $("#pb-loop-text").textContent = R.loopIn === null && R.loopOut === null ? ""
    : `loop ${R.loopIn === null ? "–" : fmtMission(R.loopIn)} – ${R.loopOut === null ? "–" : fmtMission(R.loopOut)}`;
  $("#pb-clock").textContent = `${fmtMission(R.tick)} / ${fmtMission(R.lastTick)} · tick ${R.tick}`;
  $("#pb-clock").dataset.tick = R.tick;
  const btn = $("#pb-play");
  btn.textContent = R.playing ? "Pause" : "Play";
  btn.classList.toggle("playing", R.playing);
}
