/* Banners over the map for what the operator must not miss, which a line in the events
 * panel would let pass: a safety action (a drone diverted, held, sent home; a replan that
 * failed; no safe option), a plan in force that no longer fits a drone's fuel (after a
 * pause, a hold, a leak: with the fix on its way) or meets a known SAM ahead (counting
 * down to when it would enter and when the safety layer acts: hazard.js), a drone past its point of no return (its fuel no longer covers
 * the straight way home and the reserve), and an order refused (a command the executive
 * ignored, a message or an edit it rejected). Newest on top, three at most with "N more";
 * each stays until dismissed (×); the last pause's banner stays first until then. Live only: from the events that arrive while the page
 * watches (not the history a joining page is sent). */

import { $ } from "./dom.js";
import { fmtTime, label } from "./format.js";
import { hazardText } from "./hazard.js";
import { droneIds, droneNow } from "./drones.js";
import { schedule, state } from "./store.js";
import { summary } from "./timeline.js";

const SHOWN = 3;
const KEPT = 30;
const SAFETY = new Set(["SAFETY_DIVERT", "SAFETY_HOLD", "SAFETY_RETURN", "SAFETY_FALLBACK", "NO_SAFE_OPTION", "RETURN_TO_BASE"]);
const REFUSED = new Set(["COMMAND_IGNORED", "CMD_REJECTED", "edit_rejected"]);

/** The banners, newest first (window.isr.banners): {n, kind, what, text, tick}. */
export const banners = [];
let counter = 0;
let expanded = false;
let pinned = null; // the last pause's banner: shown first until dismissed
const pastPnr = new Set(); // drones whose point of no return was passed (said once)

function add(kind, what, text, tick, hazard = null) {
  banners.unshift({ n: ++counter, kind, what, text, tick, hazard });
  banners.length = Math.min(banners.length, KEPT);
  if (pinned && !banners.includes(pinned)) banners.push(pinned); // kept until dismissed
  state.bannersDirty = true;
  schedule();
}

/** A live event: a banner when it is a safety action or a refused order. */
export function bannerFromEvent(e) {
  if (!e || !e.kind || state.replay) return;
  if (SAFETY.has(e.kind)) add("safety", "safety", summary(e), e.tick);
  else if (e.kind === "PLAN_INFEASIBLE") add("plan", "plan infeasible", summary(e), e.tick);
  else if (e.kind === "PLAN_UNSAFE") {
    const live = e.enters_tick !== undefined && e.acts_tick !== undefined;
    add("plan", "plan unsafe", live ? hazardText(e) : summary(e), e.tick, live ? e : null);
  }
  else if (e.kind === "COMMAND_IGNORED") add("refused", "refused", `${e.command}${e.drone ? " " + label(e.drone) : ""} refused: ${e.reason}`, e.tick);
  else if (REFUSED.has(e.kind)) add("refused", "refused", `${e.kind === "edit_rejected" ? "edit" : "command"} refused: ${summary(e)}`, e.tick);
}

/** A banner for each airborne drone that passes its point of no return (once, again only
 * after its fuel covered the way home once more). */
export function checkPnr() {
  if (state.replay || state.compare || !state.scene) return;
  for (const id of droneIds()) {
    const d = droneNow(id);
    const airborne = d && (d.status === "flying" || d.status === "holding");
    const past = airborne && d.pnr_km === 0;
    if (past && !pastPnr.has(id)) {
      pastPnr.add(id);
      add("pnr", "PNR passed", `${label(id)} passed its point of no return: ${Math.round(d.fuel)} km of fuel, `
        + `${Math.round(d.home_km)} km straight to its nearest end airport plus the reserve`, state.scene.tick);
    } else if (!past && pastPnr.has(id)) pastPnr.delete(id);
  }
}

/** Draw the banners (when they changed); a hazard's countdown every pass, in place. */
export function renderBanners() {
  for (const b of banners) {
    if (!b.hazard) continue;
    const text = hazardText(b.hazard);
    if (text === b.text) continue;
    b.text = text;
    const span = document.querySelector(`#banners .banner[data-n="${b.n}"] .text`);
    if (span) span.textContent = text;
  }
  if (!state.bannersDirty) return;
  state.bannersDirty = false;
  const box = $("#banners");
  box.replaceChildren();
  const hz = (state.scene && state.scene.tick_hz) || 20;
  // the pause's banner first, whatever came after it (safety actions while paused would
  // otherwise push what the pause costs out of sight)
  const rest = pinned ? banners.filter((b) => b !== pinned) : banners;
  const first = pinned ? [pinned] : [];
  const shown = [...first, ...(expanded ? rest : rest.slice(0, SHOWN - first.length))];
  for (const b of shown) {
    const div = document.createElement("div");
    div.className = "banner";
    div.dataset.kind = b.kind;
    div.dataset.n = b.n;
    const what = document.createElement("span"); what.className = "what"; what.textContent = b.what;
    const text = document.createElement("span"); text.className = "text"; text.textContent = b.text;
    const t = document.createElement("span"); t.className = "t"; t.textContent = fmtTime((b.tick || 0) / hz);
    const x = document.createElement("button");
    x.type = "button"; x.textContent = "×"; x.title = "dismiss";
    x.addEventListener("click", () => {
      const i = banners.findIndex((o) => o.n === b.n);
      if (i >= 0) banners.splice(i, 1);
      if (b === pinned) pinned = null;
      state.bannersDirty = true; renderBanners();
    });
    div.append(what, text, t, x);
    box.appendChild(div);
  }
  if (banners.length > SHOWN) {
    const more = document.createElement("div");
    more.className = "banner more";
    const b = document.createElement("button");
    b.type = "button";
    b.textContent = expanded ? "show fewer" : `${banners.length - SHOWN} more`;
    b.addEventListener("click", () => { expanded = !expanded; state.bannersDirty = true; renderBanners(); });
    const all = document.createElement("button");
    all.type = "button"; all.textContent = "dismiss all";
    all.addEventListener("click", () => { banners.length = 0; pinned = null; state.bannersDirty = true; renderBanners(); });
    more.append(b, all);
    box.appendChild(more);
  }
}

/* While the mission is paused, one banner says what the pause costs and keeps saying it:
 * how long (mission time), the fuel the airborne drones have burnt holding, and the lowest
 * plan margin (which the pause eats: a negative one is a plan that no longer fits, and the
 * executive replans at RESUME). At RESUME it stays with the final figures, to dismiss. */
let pause = null; // {since, fuel: {drone: km at the pause}, banner}

export function checkPause(mode) {
  const scene = state.scene;
  if (state.replay || state.compare || !scene) return;
  const now = scene.time || 0;
  if (mode === "PAUSED" && !pause) {
    const fuel = {};
    for (const id of droneIds()) { const d = droneNow(id); if (d) fuel[id] = d.fuel; }
    pause = { since: now, fuel, banner: { n: ++counter, kind: "pause", what: "paused", text: "", tick: scene.tick } };
    banners.unshift(pause.banner);
    pinned = pause.banner;
  }
  if (!pause) return;
  let burnt = 0;
  for (const id of droneIds()) {
    const d = droneNow(id);
    if (d && pause.fuel[id] !== undefined) burnt += Math.max(0, pause.fuel[id] - d.fuel);
  }
  let low = null;
  for (const [id, d] of Object.entries(scene.drones || {})) {
    if (d.margin_km !== null && d.margin_km !== undefined && (!low || d.margin_km < low[1])) low = [id, d.margin_km];
  }
  const lowest = low ? `; lowest plan margin ${label(low[0])} ${low[1] >= 0 ? "+" : ""}${low[1].toFixed(1)} km` : "";
  const text = `${mode === "PAUSED" ? "paused for" : "the pause lasted"} ${fmtTime(now - pause.since)} of mission time: `
    + `${burnt.toFixed(1)} km of fuel burnt holding${lowest}`;
  if (pause.banner.text !== text) { pause.banner.text = text; state.bannersDirty = true; schedule(); }
  if (mode !== "PAUSED") pause = null;
}
