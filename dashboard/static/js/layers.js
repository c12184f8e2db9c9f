/* The map's layers and legend, in one box under the toolbar's Layers button: each kind of
 * path (flown, frozen, planned, the draft), the SAM rings and the labels switch on and off, and
 * each drone (its marker and paths), and on a swarm's map every drone's paths when zoomed out
 * ("all paths", off by default); the rest of the box is the legend (target colours,
 * hidden SAMs, and the replay's and the compare's own lines). What is switched off, and
 * whether the box is open, is remembered in this browser (localStorage "isr.layers"). A layer
 * switched off is a class on #map (CSS hides it); a drone switched off is not drawn. */

import { $ } from "./dom.js";
import { label } from "./format.js";
import { schedule, state } from "./store.js";

const KEY = "isr.layers";
const KINDS = ["flown", "frozen", "planned", "draft", "rings", "labels", "allpaths"];
// Off until asked for: every drone's paths on a swarm's map even when zoomed out (swarm.js).
const OFF_BY_DEFAULT = new Set(["allpaths"]);

/** What is shown (window.isr.layers): kind -> bool, and the drones switched off. */
export const L = { on: Object.fromEntries(KINDS.map((k) => [k, !OFF_BY_DEFAULT.has(k)])), hidden: new Set(), open: false };

function save() {
  try {
    localStorage.setItem(KEY, JSON.stringify({ on: L.on, hidden: [...L.hidden], open: L.open }));
  } catch (_) { /* storage full or off: the choice lasts for the page */ }
}

function load() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) || "null");
    if (!saved) return;
    for (const k of KINDS) if (typeof (saved.on || {})[k] === "boolean") L.on[k] = saved.on[k];
    L.hidden = new Set(Array.isArray(saved.hidden) ? saved.hidden.map(String) : []);
    L.open = Boolean(saved.open);
  } catch (_) { /* a bad entry: the defaults */ }
}

/** Whether a layer kind is shown. */
export const layerOn = (kind) => L.on[kind] !== false;

/** Whether a drone (its marker and paths) is shown. */
export const droneShown = (id) => !L.hidden.has(String(id));

function apply() {
  const map = $("#map");
  for (const k of KINDS) map.classList.toggle("no-" + k, !L.on[k]);
  for (const box of document.querySelectorAll("#layers input[data-layer]")) box.checked = L.on[box.dataset.layer];
  $("#layers").hidden = !L.open;
  $("#btn-layers").setAttribute("aria-expanded", String(L.open));
}

/** One switch per drone of the scene, in its colour (again when the fleet changes). */
export function renderDroneLayers(ids, colourOf) {
  const box = $("#layer-drones");
  const key = ids.join(",");
  if (box.dataset.ids === key) return;
  box.dataset.ids = key;
  box.replaceChildren();
  for (const id of ids) {
    const row = document.createElement("label");
    row.className = "lg";
    const input = document.createElement("input");
    input.type = "checkbox";
    input.dataset.drone = id;
    input.checked = droneShown(id);
    input.addEventListener("change", () => {
      if (input.checked) L.hidden.delete(id); else L.hidden.add(id);
      save();
      state.sceneDirty = true; state.telemetryDirty = true; schedule();
    });
    const sw = document.createElement("i");
    sw.className = "swatch";
    sw.style.background = colourOf(id);
    row.append(input, sw, label(id));
    box.appendChild(row);
  }
}

/** The Layers button and the switches. */
export function initLayers() {
  load();
  window.isr.layers = L;
  $("#btn-layers").addEventListener("click", () => { L.open = !L.open; save(); apply(); });
  for (const box of document.querySelectorAll("#layers input[data-layer]")) {
    box.addEventListener("change", () => {
      L.on[box.dataset.layer] = box.checked;
      save(); apply();
      state.sceneDirty = true; schedule();
    });
  }
  apply();
}
