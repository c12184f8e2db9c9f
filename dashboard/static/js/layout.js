/* The page's layout, set by the operator and remembered in this browser (localStorage
 * "isr.layout"): the side panels' width (the splitter between the map and them), the dock's
 * height under the map (fleet and inspector), the replay charts' height, the share of the side
 * between the events and the agent runs, and which panels are collapsed (a click on a
 * panel's title folds it to its title bar). Each splitter is dragged with the pointer, or
 * moved with the arrow keys when focused; a double click puts it back. Sizes are CSS
 * variables on <body> (--side-w, --dock-h, --charts-h, --timeline-grow, --agents-grow). */

import { schedule, state } from "./store.js";

const KEY = "isr.layout";
const LIMITS = {
  side: { min: 260, max: () => Math.max(300, window.innerWidth * 0.6) },
  dock: { min: 40, max: () => Math.max(80, window.innerHeight * 0.6) },
  charts: { min: 60, max: () => Math.max(80, window.innerHeight * 0.5) },
};

/** The layout (window.isr.layout): sizes in px, the events' share of the side, collapsed panels. */
export const layout = { side: null, dock: null, charts: null, timeline: null, collapsed: {} };

function save() {
  try { localStorage.setItem(KEY, JSON.stringify(layout)); } catch (_) { /* the page keeps it */ }
}

function load() {
  try {
    const saved = JSON.parse(localStorage.getItem(KEY) || "null") || {};
    for (const k of ["side", "dock", "charts", "timeline"]) if (Number.isFinite(saved[k])) layout[k] = saved[k];
    if (saved.collapsed && typeof saved.collapsed === "object")
      for (const [k, v] of Object.entries(saved.collapsed)) if (typeof v === "boolean") layout.collapsed[k] = v;
  } catch (_) { /* a bad entry: the defaults */ }
}

const clamp = (v, lo, hi) => Math.min(Math.max(v, lo), hi);

function apply() {
  const body = document.body.style;
  const px = (name, v, lim) => {
    if (v === null) body.removeProperty(name);
    else body.setProperty(name, `${Math.round(clamp(v, lim.min, lim.max()))}px`);
  };
  px("--side-w", layout.side, LIMITS.side);
  px("--dock-h", layout.dock, LIMITS.dock);
  document.getElementById("dock")?.classList.toggle("sized", layout.dock !== null);
  px("--charts-h", layout.charts, LIMITS.charts);
  if (layout.timeline === null) { body.removeProperty("--timeline-grow"); body.removeProperty("--agents-grow"); }
  else {
    const f = clamp(layout.timeline, 0.1, 0.9);
    body.setProperty("--timeline-grow", f.toFixed(3));
    body.setProperty("--agents-grow", (1 - f).toFixed(3));
  }
  for (const panel of document.querySelectorAll(".panel[data-panel]"))
    panel.classList.toggle("collapsed", Boolean(layout.collapsed[panel.dataset.panel]));
  state.sceneDirty = true; // the map's size changed: its unit and labels follow
  schedule();
}

/** The size a splitter sets, from where the pointer is. */
function sizeAt(which, ev, start) {
  if (which === "side") return start.size - (ev.clientX - start.x);
  if (which === "timeline") {
    const a = document.getElementById("timeline-panel").getBoundingClientRect();
    const b = document.getElementById("agents-panel").getBoundingClientRect();
    const total = b.bottom - a.top;
    return total > 0 ? (ev.clientY - a.top) / total : 0.5;
  }
  return start.size - (ev.clientY - start.y); // dock, charts: dragged up to grow
}

function current(which) {
  const id = { side: "side", dock: "dock", charts: "charts" }[which];
  const node = id && document.getElementById(id);
  if (!node) return 0;
  const r = node.getBoundingClientRect();
  return which === "side" ? r.width : r.height;
}

function initSplitter(handle) {
  const which = handle.dataset.split;
  handle.tabIndex = 0;
  handle.setAttribute("role", "separator");
  handle.setAttribute("aria-orientation", which === "side" ? "vertical" : "horizontal");
  let start = null;
  handle.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    start = { x: ev.clientX, y: ev.clientY, size: current(which) };
    handle.setPointerCapture(ev.pointerId);
    handle.classList.add("dragging");
    ev.preventDefault();
  });
  handle.addEventListener("pointermove", (ev) => {
    if (!start) return;
    layout[which] = sizeAt(which, ev, start);
    apply();
  });
  const stop = (ev) => {
    if (!start) return;
    start = null;
    handle.classList.remove("dragging");
    try { handle.releasePointerCapture(ev.pointerId); } catch (_) { /* released */ }
    save();
  };
  handle.addEventListener("pointerup", stop);
  handle.addEventListener("pointercancel", stop);
  handle.addEventListener("dblclick", () => { layout[which] = null; apply(); save(); });
  handle.addEventListener("keydown", (ev) => {
    const step = ev.shiftKey ? 60 : 15;
    const keys = which === "side" ? { ArrowLeft: step, ArrowRight: -step } : { ArrowUp: step, ArrowDown: -step };
    if (!(ev.key in keys)) return;
    if (which === "timeline") layout.timeline = clamp((layout.timeline ?? 0.5) - keys[ev.key] / 600, 0.1, 0.9);
    else layout[which] = current(which) + keys[ev.key];
    apply(); save();
    ev.preventDefault();
  });
}

/** A click on a panel's title (not on a control in it) folds or unfolds the panel. */
function initCollapse() {
  for (const panel of document.querySelectorAll(".panel[data-panel]")) {
    const h2 = panel.querySelector(":scope > h2");
    if (!h2) continue;
    h2.title = h2.title || "click to fold or unfold";
    h2.addEventListener("click", (ev) => {
      if (ev.target.closest("button, input, label, a, select")) return;
      const id = panel.dataset.panel;
      layout.collapsed[id] = !panel.classList.contains("collapsed");
      apply(); save();
    });
  }
}

/** The splitters and the panels' titles; the saved layout applied. */
export function initLayout() {
  load();
  window.isr.layout = layout;
  for (const handle of document.querySelectorAll(".splitter[data-split]")) initSplitter(handle);
  initCollapse();
  window.addEventListener("resize", () => apply());
  apply();
}
