/* Labels that do not collide, with each other or with any marker: every label of the map
 * (drones, airports, SAMs, targets) tries places around its anchor, the one it had last
 * first (so labels do not jump about), then nearest first, and takes the first that
 * overlaps no label placed before it and no marker (a drone, an airport's square, a
 * target's circle, a SAM's centre). Greedy, in the order given: drones first, then
 * airports, SAMs, targets. A drone's label is always shown (at its least crowded place); any
 * other label that finds no clear place is hidden (its name stays in the inspector and the
 * tooltip) rather than drawn over another. Boxes are in km (y up) and bucketed in a grid, so a
 * frame costs about the number of labels, whatever the size of the mission. */

/** A box {x0, y0, x1, y1} (km, y up) for text whose baseline starts at (x, y): the glyphs'
 * ascent and descent as a browser lays out a sans-serif, with a small margin; ``width`` as
 * the browser measured it (``measured``), else estimated. */
export function textBox(x, y, text, size, width) {
  const w = width || 0.62 * size * text.length;
  const pad = 0.08 * size;
  return { x0: x - pad, y0: y - 0.3 * size - pad, x1: x + w + pad, y1: y + 0.98 * size + pad };
}

/** The rendered width of an SVG text element in its own units (km here); 0 when it is not
 * laid out (a hidden map), so textBox estimates instead. */
export function measured(textEl) {
  try { return textEl ? textEl.getComputedTextLength() : 0; } catch { return 0; }
}

const overlap = (a, b) => a.x0 < b.x1 && b.x0 < a.x1 && a.y0 < b.y1 && b.y0 < a.y1;

function area(a, b) {
  const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
  const h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
  return w > 0 && h > 0 ? w * h : 0;
}

/** Boxes bucketed by a uniform grid: what may touch a box is in the cells it covers. */
class Grid {
  constructor(cell) { this.cell = cell; this.cells = new Map(); }
  *keys(b) {
    const c = this.cell;
    const i0 = Math.floor(b.x0 / c), i1 = Math.floor(b.x1 / c);
    const j0 = Math.floor(b.y0 / c), j1 = Math.floor(b.y1 / c);
    if ((i1 - i0 + 1) * (j1 - j0 + 1) > 400) { yield "big"; return; } // a huge box: one bucket
    for (let i = i0; i <= i1; i++) for (let j = j0; j <= j1; j++) yield i + ":" + j;
  }
  add(b) {
    for (const k of this.keys(b)) {
      let list = this.cells.get(k);
      if (!list) { list = []; this.cells.set(k, list); }
      list.push(b);
    }
  }
  /** The boxes that may overlap b (each once). */
  near(b) {
    const seen = new Set();
    const out = [];
    for (const k of [...this.keys(b), "big"]) {
      for (const o of this.cells.get(k) || []) if (!seen.has(o)) { seen.add(o); out.push(o); }
    }
    return out;
  }
}

/** The offsets (from the anchor to the baseline's start) a label may take: right, left,
 * below, above, then further out in rings; w its width, g the gap from the anchor. */
function candidates(w, size, g) {
  const line = 1.3 * size, up = -0.35 * size; // the text's middle on the anchor's level
  const out = [
    [g, up], [-g - w, up], [-w / 2, g], [-w / 2, -g - 0.98 * size],
    [g, up + line * 0.6], [g, up - line * 0.6], [-g - w, up + line * 0.6], [-g - w, up - line * 0.6],
    [g * 0.7, g * 0.7], [-g * 0.7 - w, g * 0.7], [g * 0.7, -g * 0.7 - 0.98 * size], [-g * 0.7 - w, -g * 0.7 - 0.98 * size],
  ];
  for (let k = 1; k <= 6; k++) {
    const d = g + k * line;
    out.push([g, up + k * line], [g, up - k * line], [-g - w, up + k * line], [-g - w, up - k * line],
             [-w / 2, d], [-w / 2, -d - 0.98 * size], [d, up], [-d - w, up]);
  }
  return out;
}

/** Where each label goes. items: [{x, y, text, size, gap, width?, keep?, slot?}] in the order
 * to place them (``keep``: never hidden); obstacles: marker boxes. Returns per item
 * {x, y, box, slot} (the baseline's start relative to its anchor, its box and which place it
 * took, to try first next time), or {hidden: true} for a label with no clear place. */
export function placeLabels(items, obstacles) {
  const size = items.reduce((m, it) => Math.max(m, it.size), 0) || 1;
  const grid = new Grid(4 * size);
  for (const o of obstacles) grid.add(o);
  const out = [];
  for (const it of items) {
    const w = textBox(0, 0, it.text, it.size, it.width).x1 - 0.08 * it.size * 2;
    const offsets = candidates(w, it.size, it.gap);
    const order = Number.isInteger(it.slot) && it.slot < offsets.length
      ? [it.slot, ...offsets.keys()] : [...offsets.keys()];
    let best = null;
    for (const k of order) {
      const [dx, dy] = offsets[k];
      const box = textBox(it.x + dx, it.y + dy, it.text, it.size, it.width);
      const near = grid.near(box);
      if (!near.some((o) => overlap(box, o))) { best = { dx, dy, box, slot: k, cost: 0 }; break; }
      if (it.keep) {
        const cost = near.reduce((c, o) => c + area(box, o), 0);
        if (!best || cost < best.cost) best = { dx, dy, box, slot: k, cost };
      }
    }
    if (!best) { out.push({ hidden: true }); continue; }
    grid.add(best.box);
    out.push({ x: best.dx, y: best.dy, box: best.box, slot: best.slot });
  }
  return out;
}
