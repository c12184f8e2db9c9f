/* The edit tools of the map's toolbar: select (a click selects a drone, target, SAM or
 * airport: ringed on the map, described in the inspector), add a SAM or a target where
 * clicked, move a target or a SAM by dragging it, remove one, mark a drone lost (after a
 * confirmation: it cannot be undone). Each edit goes to POST /api/edits; the executive
 * stamps it at the next tick. */

import { edit } from "./api.js";
import { confirmAction } from "./confirm.js";
import { $, el } from "./dom.js";
import { label } from "./format.js";
import { select } from "./select.js";
import { schedule, state } from "./store.js";
import { hitAt } from "./swarm.js";
import { toast } from "./toast.js";

function toWorld(clientX, clientY) {
  const m = $("#world").getScreenCTM().inverse();
  const p = new DOMPoint(clientX, clientY).matrixTransform(m);
  return { x: Math.round(p.x * 100) / 100, y: Math.round(p.y * 100) / 100 };
}

function freshId(prefix) {
  let n = 1;
  for (const id of state.usedIds) {
    const m = id.match(new RegExp("^" + prefix + "(\\d+)$"));
    if (m) n = Math.max(n, Number(m[1]) + 1);
  }
  while (state.usedIds.has(prefix + n)) n++;
  state.usedIds.add(prefix + n);
  return prefix + n;
}

/** Remember the scene's target and SAM ids, so that a new one gets a fresh id. */
export function rememberIds(scene) {
  for (const t of scene.targets || []) state.usedIds.add(t.id);
  for (const s of scene.sams || []) state.usedIds.add(s.id);
}

const HINTS = {
  "select": "click a drone, target, SAM or airport to inspect it",
  "add-sam": "click on the map to place a SAM (range from the toolbar)",
  "add-target": "click on the map to place a target (priority and type from the toolbar)",
  "move": "drag a target or a SAM to move it",
  "remove": "click a target or a SAM to remove it",
  "lose-drone": "click a drone to mark it lost",
};

/** Choose the tool (and show its hint over the map). */
export function setTool(tool) {
  state.tool = tool;
  $("#map").dataset.tool = tool;
  $("#map-hint").textContent = HINTS[tool] || "";
}

/** What a pointer event is on: what a swarm's canvas drew there (drawn over the SVG, so it
 * comes first: a drone inside a SAM's ring is the drone), else an SVG marker. */
function hit(ev) {
  const drawn = hitAt(ev.clientX, ev.clientY);
  if (drawn) return drawn;
  const target = ev.target;
  const t = target.closest
    && target.closest("[data-target-id],[data-sam-id],[data-drone-id].drone,[data-airport-id]");
  if (!t) return null;
  if (t.dataset.targetId) return { kind: "target", id: t.dataset.targetId, el: t };
  if (t.dataset.samId) return { kind: "sam", id: t.dataset.samId, el: t };
  if (t.dataset.airportId) return { kind: "airport", id: t.dataset.airportId, el: t };
  return { kind: "drone", id: t.dataset.droneId, el: t };
}

async function onMapClick(ev) {
  const p = toWorld(ev.clientX, ev.clientY);
  const h = hit(ev);
  try {
    switch (state.tool) {
      case "add-sam": {
        const range = Number($("#sam-range").value);
        const id = freshId("S");
        ghost(p, range);
        await edit({ op: "add_sam", id, pos: [p.x, p.y], range });
        toast(`SAM ${id} sent: (${p.x}, ${p.y}) range ${range}`, "info");
        break;
      }
      case "add-target": {
        const id = freshId("T");
        await edit({ op: "add_target", id, x: p.x, y: p.y,
                     priority: Number($("#target-priority").value), type: $("#target-type").value.trim() });
        toast(`target ${id} sent`, "info");
        break;
      }
      case "remove":
        if (h && h.kind === "target") { await edit({ op: "remove_target", id: h.id }); toast(`remove ${h.id} sent`, "info"); }
        else if (h && h.kind === "sam") { await edit({ op: "remove_sam", id: h.id }); toast(`remove ${h.id} sent`, "info"); }
        break;
      case "lose-drone":
        if (h && h.kind === "drone") {
          const name = label(h.id);
          const sure = await confirmAction({
            title: `Mark ${name} lost?`,
            text: `${name} is taken out of the mission for good (it cannot be undone); its targets are replanned for the others.`,
            ok: "Mark lost",
          });
          if (!sure) break;
          await edit({ op: "disable_drone", drone: h.id });
          toast(`${name} marked lost`, "info");
        }
        break;
      case "select":
      default:
        select(h ? { kind: h.kind, id: h.id } : null);
        break;
    }
  } catch (_) { /* the toast already says why */ }
}

function ghost(p, range) {
  const g = $("#l-ghost");
  g.replaceChildren();
  g.setAttribute("class", "ghost");
  el("circle", { cx: p.x, cy: p.y, r: range, "vector-effect": "non-scaling-stroke" }, g);
  setTimeout(() => g.replaceChildren(), 1500);
}

/** The tool switches, and the pointer on the map: a click uses the tool, a drag moves. */
export function initTools() {
  for (const r of document.querySelectorAll("input[name=tool]"))
    r.addEventListener("change", () => setTool(r.value));
  const svg = $("#map");
  let down = null;
  svg.addEventListener("pointerdown", (ev) => {
    if (ev.button !== 0) return;
    const h = hit(ev);
    down = { x: ev.clientX, y: ev.clientY, h };
    if (state.tool === "move" && h && (h.kind === "target" || h.kind === "sam")) {
      state.dragging = { ...h, start: toWorld(ev.clientX, ev.clientY) };
      svg.setPointerCapture(ev.pointerId);
      ev.preventDefault();
    }
  });
  svg.addEventListener("pointermove", (ev) => {
    const d = state.dragging;
    if (!d) return;
    const p = toWorld(ev.clientX, ev.clientY);
    if (d.el) d.el.setAttribute("transform", `translate(${p.x},${p.y})`); // a canvas target: no preview
    d.to = p;
  });
  svg.addEventListener("pointerup", async (ev) => {
    const d = state.dragging;
    const start = down;
    down = null;
    if (d) {
      state.dragging = null;
      try { svg.releasePointerCapture(ev.pointerId); } catch (_) { /* released */ }
      if (d.to) {
        try {
          if (d.kind === "target") await edit({ op: "move_target", id: d.id, x: d.to.x, y: d.to.y });
          else await edit({ op: "move_sam", id: d.id, pos: [d.to.x, d.to.y] });
          toast(`move ${d.id} sent`, "info");
        } catch (_) { /* toast shown */ }
      }
      state.sceneDirty = true; schedule();
      return;
    }
    if (start && Math.hypot(ev.clientX - start.x, ev.clientY - start.y) < 6) onMapClick(ev);
  });
}
