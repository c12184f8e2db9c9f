/* The inspector (in the dock beside the fleet table): the selected drone, target, SAM or
 * airport in words and units, updated on every frame. A drone: what it is doing (flying its
 * plan, holding and why, on its way home and why, landed, lost and how), where (km, and
 * latitude and longitude on a geographic mission), its heading in degrees (0 north,
 * clockwise), speed in km/h and m/s, fuel and margin in km, when it must turn home (the point
 * of no return in km and mission time, or bingo fuel), the path left, its planned targets in
 * order, its points. A target: its state and who collects it, priority, sensor type. A SAM:
 * known or hidden, range, the planned path closest to it. An airport: who is there, who lands
 * there. No raw fields, no radians, no nulls.
 *
 * A live drone's actions, each behind a confirmation: Return home and Hold here (the
 * executive's RETURN and HOLD, through its safety layer), Resume (a drone the operator held),
 * and Mark lost (the disable_drone edit). Each is disabled with its reason when it cannot act
 * (a replay, the run over, the drone landed...). */

import { command, edit } from "./api.js";
import { confirmAction } from "./confirm.js";
import { blockedReason } from "./controls.js";
import { $ } from "./dom.js";
import { droneColour, droneNow } from "./drones.js";
import { fmtTime, label } from "./format.js";
import { select } from "./select.js";
import { state } from "./store.js";
import { toast } from "./toast.js";
import { toLatLon } from "./viewport.js";

const COMPASS = ["N", "NE", "E", "SE", "S", "SW", "W", "NW"];

/** km in words: one decimal under 10 km, else whole km. */
export function km(v) {
  if (v === null || v === undefined || !Number.isFinite(v)) return "–";
  return `${Math.abs(v) < 10 ? (Math.round(v * 10) / 10).toFixed(1) : Math.round(v)} km`;
}

const signedKm = (v) => (v >= 0 ? "+" : "−") + km(Math.abs(v));

/** A heading in radians (0 east, counter-clockwise, as the sim has it) as a compass bearing:
 * degrees from north, clockwise, and the point of the compass. */
export function bearing(rad) {
  const deg = (((90 - (rad * 180) / Math.PI) % 360) + 360) % 360;
  return `${String(Math.round(deg) % 360).padStart(3, "0")}° (${COMPASS[Math.round(deg / 45) % 8]})`;
}

/** A speed in km/s as km/h and m/s. */
export const speedWords = (kms) => `${Math.round(kms * 3600)} km/h (${Math.round(kms * 1000)} m/s)`;

function where(x, y) {
  let text = `${x.toFixed(1)} km east, ${y.toFixed(1)} km north`;
  const geo = state.scene && state.scene.geo;
  if (geo && Number.isFinite(geo.lat0)) {
    const ll = toLatLon(x, y, geo);
    text += ` (${Math.abs(ll.lat).toFixed(4)}° ${ll.lat >= 0 ? "N" : "S"}, ${Math.abs(ll.lon).toFixed(4)}° ${ll.lon >= 0 ? "E" : "W"})`;
  }
  return text;
}

function span(text, cls) {
  const s = document.createElement("span");
  s.textContent = text;
  if (cls) s.className = cls;
  return s;
}

const targetIds = () => new Set(((state.scene || {}).targets || []).map((t) => t.id));

function airportAt(x, y) {
  const a = ((state.scene || {}).airports || []).find((p) => Math.hypot(p.x - x, p.y - y) < 0.05);
  return a ? a.id : null;
}

/** What the drone is doing, in words. */
export function droneStatusWords(id, d) {
  const mode = (state.telemetry || {}).mode || (state.scene || {}).mode;
  switch (d.status) {
    case "flying":
      if (d.returning) return `flying home: ${d.returning}`;
      return d.next_target ? `flying its plan, next ${d.next_target}` : "flying its plan to its end airport";
    case "holding":
      if (mode === "PAUSED" && !d.held) return "holding: the mission is paused";
      if (d.held) return `holding: ${d.held}`;
      return "holding";
    case "landed": {
      const at = airportAt(d.x, d.y);
      return at ? `landed at ${at}` : "landed";
    }
    case "lost": {
      const why = (state.lostReasons || {})[id];
      return why ? `lost: ${why}` : "lost";
    }
    case "parked": {
      if (d.enabled === false) return "disabled in the scenario";
      const at = airportAt(d.x, d.y);
      return `parked${at ? " at " + at : ""}, not flying`;
    }
    default:
      return d.status || "–";
  }
}

function turnHome(d) {
  const airborne = d.status === "flying" || d.status === "holding";
  if (!airborne) return null;
  if (d.pnr_km === 0) {
    return span(`point of no return passed: its ${km(d.fuel)} of fuel no longer cover the straight way`
      + ` to its nearest end airport (${km(d.home_km)}) and the reserve`, "bad");
  }
  if (d.pnr_km !== null && d.pnr_km !== undefined) {
    const t = d.speed > 0 ? ` (${fmtTime(d.pnr_km / d.speed)} at its speed)` : "";
    return span(`point of no return in ${km(d.pnr_km)}${t}: its path goes on past it`, "warn");
  }
  if (d.bingo_km === null || d.bingo_km === undefined) return "no end airport known";
  return `bingo at ${km(d.bingo_km)} of fuel (${km(d.spare_km)} spare): its path comes home within its fuel`;
}

function routeList(d) {
  const ids = targetIds();
  const status = new Map(((state.scene || {}).targets || []).map((t) => [t.id, t.status]));
  const stops = (d.route || []).filter((t) => ids.has(t));
  if (!stops.length) return "none";
  const ol = document.createElement("ol");
  for (const t of stops) {
    const li = document.createElement("li");
    li.textContent = t;
    const st = status.get(t);
    if (st === "collected") { li.className = "collected"; li.title = "collected"; }
    else if (t === d.next_target) { li.className = "next"; li.title = "next"; }
    ol.appendChild(li);
  }
  return ol;
}

function droneFacts(id) {
  const d = droneNow(id);
  if (!d) return null;
  const airborne = d.status === "flying" || d.status === "holding";
  const facts = [
    ["status", droneStatusWords(id, d)],
    ["position", where(d.x, d.y)],
  ];
  if (airborne) {
    facts.push(["heading", bearing(d.heading || 0)]);
    facts.push(["speed", speedWords(d.speed || 0)]);
  }
  facts.push(["fuel", `${km(d.fuel)} of ${km(d.budget)} (${Math.round((100 * d.fuel) / Math.max(d.budget, 1e-9))} %)`]);
  if (airborne && d.margin_km !== null && d.margin_km !== undefined) {
    facts.push(["margin", d.margin_km < 0
      ? span(`${signedKm(d.margin_km)}: its planned path is longer than its fuel`, "bad")
      : `${signedKm(d.margin_km)} once its planned path is flown`]);
    const t = d.speed > 0 ? `, ${fmtTime(d.remaining_km / d.speed)} at its speed` : "";
    facts.push(["path left", `${km(d.remaining_km)}${t}`]);
  }
  const home = turnHome(d);
  if (home) facts.push(["turn home", home]);
  facts.push(["targets", routeList(d)]);
  facts.push(["points", `${Math.round((d.points || 0) * 10) / 10} collected`]);
  if (Array.isArray(d.sensors) || typeof d.sensors === "string")
    facts.push(["sensors", Array.isArray(d.sensors) ? d.sensors.join(", ") || "none" : d.sensors]);
  return { title: `${label(id)} · ${d.status}`, facts, colour: droneColour(id) };
}

function nearestSam(x, y) {
  let best = null;
  for (const s of (state.scene || {}).sams || []) {
    if (!s.known && !state.truth) continue;
    const edge = Math.hypot(s.x - x, s.y - y) - s.range;
    if (!best || edge < best.edge) best = { id: s.id, edge };
  }
  return best;
}

function targetFacts(id) {
  const t = ((state.scene || {}).targets || []).find((o) => o.id === id);
  if (!t) return null;
  const drones = (state.scene || {}).drones || {};
  let status;
  if (t.status === "collected") status = `collected${t.drone ? " by " + label(t.drone) : ""}`;
  else if (t.status === "planned" && t.drone) {
    const stops = ((drones[t.drone] || {}).route || []).filter((x) => targetIds().has(x));
    const n = stops.indexOf(t.id) + 1;
    status = `planned for ${label(t.drone)}${n ? `, stop ${n} of ${stops.length}` : ""}`;
  } else if (t.status === "excluded") {
    const sam = nearestSam(t.x, t.y);
    status = sam && sam.edge < 0 ? `excluded: inside ${sam.id}` : "excluded: left out of the plan";
  } else status = "pending: in no drone's plan";
  const facts = [["status", status], ["priority", `${t.priority} points`], ["sensor type", t.type], ["position", where(t.x, t.y)]];
  const sam = nearestSam(t.x, t.y);
  if (sam) facts.push(["nearest SAM", sam.edge < 0 ? `inside ${sam.id}` : `${sam.id}, ${km(sam.edge)} from its edge`]);
  return { title: `target ${t.id} · ${t.status}`, facts };
}

/** The planned (or frozen) path that comes closest to a disk: {drone, km} outside its edge. */
function closestPath(s) {
  let best = null;
  for (const [id, d] of Object.entries((state.scene || {}).drones || {})) {
    for (const poly of [d.frozen || [], d.planned || []]) {
      for (let i = 1; i < poly.length; i++) {
        const [ax, ay] = poly[i - 1], [bx, by] = poly[i];
        const dx = bx - ax, dy = by - ay, dd = dx * dx + dy * dy;
        const f = dd > 0 ? Math.min(1, Math.max(0, ((s.x - ax) * dx + (s.y - ay) * dy) / dd)) : 0;
        const gap = Math.hypot(ax + f * dx - s.x, ay + f * dy - s.y) - s.range;
        if (!best || gap < best.km) best = { drone: id, km: gap };
      }
    }
  }
  return best;
}

function samFacts(id) {
  const s = ((state.scene || {}).sams || []).find((o) => o.id === id);
  if (!s) return null;
  const facts = [
    ["status", s.known ? "known: every plan keeps out of it" : "hidden: not known to the executive (ground truth)"],
    ["range", km(s.range)],
    ["centre", where(s.x, s.y)],
  ];
  const near = closestPath(s);
  if (near) facts.push(["closest path", near.km < 0
    ? span(`${label(near.drone)}'s planned path enters it`, "bad")
    : `${label(near.drone)}'s, ${km(near.km)} outside its edge`]);
  return { title: `SAM ${s.id} · ${s.known ? "known" : "hidden"}`, facts };
}

function airportFacts(id) {
  const a = ((state.scene || {}).airports || []).find((o) => o.id === id);
  if (!a) return null;
  const here = [], landing = [];
  for (const [did] of Object.entries((state.scene || {}).drones || {})) {
    const d = droneNow(did);
    if (Math.hypot(d.x - a.x, d.y - a.y) < 0.05) here.push(`${label(did)} (${d.status})`);
    const route = d.route || [];
    if ((d.status === "flying" || d.status === "holding") && route[route.length - 1] === id) landing.push(label(did));
  }
  return {
    title: `airport ${a.id}`,
    facts: [["position", where(a.x, a.y)], ["drones here", here.join(", ") || "none"],
            ["planned to land here", landing.join(", ") || "none"]],
  };
}

const FACTS = { drone: droneFacts, target: targetFacts, sam: samFacts, airport: airportFacts };

// ----- the drone's actions -------------------------------------------------------------------

const ACTIONS = [
  { key: "RETURN", label: "Return home", title: "fly to the nearest airport it can reach (its allowed ends first), around the known SAMs; no plan re-tasks it" },
  { key: "HOLD", label: "Hold here", title: "circle where it is (if that circle is clear of every known SAM) until Resume or the next plan" },
  { key: "RESUME", label: "Resume", title: "fly on from the hold the operator put it in" },
  { key: "LOST", label: "Mark lost", title: "the drone is lost (an environment edit): its targets are replanned for the others", warn: true },
];

function actionReason(key, d) {
  const blocked = blockedReason();
  if (blocked) return blocked;
  const airborne = d.status === "flying" || d.status === "holding";
  if (key === "RETURN") {
    if (!airborne) return `it is ${d.status}, not airborne`;
    if (d.returning) return "already on its way home";
  }
  if (key === "HOLD") {
    if (d.status !== "flying") return `it is ${d.status}, not flying`;
    if (d.returning) return "on its way home";
  }
  if (key === "RESUME" && !(d.status === "holding" && d.held === "operator: hold")) return "not held by the operator";
  if (key === "LOST" && d.status === "lost") return "already lost";
  return "";
}

async function act(key, id) {
  const name = label(id);
  const words = {
    RETURN: [`Send ${name} home?`, `${name} leaves its plan and flies to the nearest airport it can reach; its targets go to the other drones.`, "Return home"],
    HOLD: [`Hold ${name} here?`, `${name} circles where it is until you resume it (or a new plan re-tasks it); its fuel keeps burning.`, "Hold"],
    RESUME: [`Resume ${name}?`, `${name} flies on along its path.`, "Resume"],
    LOST: [`Mark ${name} lost?`, `${name} is taken out of the mission for good (it cannot be undone); its targets are replanned for the others.`, "Mark lost"],
  }[key];
  if (!(await confirmAction({ title: words[0], text: words[1], ok: words[2] }))) return;
  try {
    if (key === "LOST") await edit({ op: "disable_drone", drone: id });
    else await command(key, undefined, id);
    toast(`${words[2]} ${name} sent`, "info");
  } catch (_) { /* the toast says why */ }
}

function renderActions(kind, id) {
  const box = $("#insp-actions");
  const key = `${kind}:${id}`;
  if (box.dataset.for !== key) {
    box.dataset.for = key;
    box.replaceChildren();
    if (kind === "drone" && !state.replay && !state.compare) {
      for (const a of ACTIONS) {
        const b = document.createElement("button");
        b.type = "button";
        b.dataset.action = a.key;
        b.textContent = a.label;
        b.dataset.origTitle = a.title;
        if (a.warn) b.className = "warn";
        b.addEventListener("click", () => act(a.key, id));
        box.appendChild(b);
      }
    }
  }
  if (kind !== "drone") return;
  const d = droneNow(id);
  for (const b of box.querySelectorAll("button[data-action]")) {
    const why = d ? actionReason(b.dataset.action, d) : "no such drone";
    const title = why ? `disabled: ${why}` : b.dataset.origTitle;
    if (b.disabled !== Boolean(why)) b.disabled = Boolean(why);
    if (b.title !== title) b.title = title;
  }
}

// ----- drawing ----------------------------------------------------------------------------

let shownKey = "";

/** Draw the inspector for the selection (each render pass); hidden when nothing is selected. */
export function renderInspector() {
  const panel = $("#inspector");
  const sel = state.selected;
  const info = sel && FACTS[sel.kind] ? FACTS[sel.kind](sel.id) : null;
  panel.hidden = !info;
  $("#dock").classList.toggle("inspecting", Boolean(info));
  if (!info) { shownKey = ""; return; }
  panel.dataset.kind = sel.kind;
  panel.dataset.id = sel.id;
  $("#insp-title").textContent = info.title;
  const dl = $("#insp-facts");
  // rebuilt only when what it says changed (a frame repeats most of it)
  const key = JSON.stringify(info.facts.map(([k, v]) => [k, typeof v === "string" ? v : v.outerHTML]));
  if (key !== shownKey) {
    shownKey = key;
    dl.replaceChildren();
    for (const [k, v] of info.facts) {
      const dt = document.createElement("dt"); dt.textContent = k; dt.dataset.fact = k;
      const dd = document.createElement("dd"); dd.dataset.fact = k;
      if (typeof v === "string") dd.textContent = v; else dd.appendChild(v);
      dl.append(dt, dd);
    }
  }
  renderActions(sel.kind, sel.id);
}

/** The × closes the inspector (deselects). */
export function initInspector() {
  $("#insp-close").addEventListener("click", (ev) => { ev.stopPropagation(); select(null); });
}
