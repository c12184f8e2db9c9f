/* Labels that do not collide: each label tries places around its anchor, nearest first, and
 * takes the first that overlaps no label placed before it nor any obstacle (a marker, an
 * airport's square and label); drones sharing an airport get their labels stacked beside
 * it. Greedy, in the order given, in km (y up): a few dozen labels per frame cost nothing. */

/** A box {x0, y0, x1, y1} for text whose baseline starts at (x, y), in km; ``width`` as the
 * browser measured it (``measured``), else estimated for the labels' bold sans-serif. */
export function textBox(x, y, text, size, width) {
  const w = width || 0.72 * size * text.length;
  return { x0: x, y0: y - 0.25 * size, x1: x + w, y1: y + 0.8 * size };
}

/** The rendered width of an SVG text element in its own units (km here); 0 when it is not
 * laid out (a hidden map), so textBox estimates instead. */
export function measured(textEl) {
  try { return textEl ? textEl.getComputedTextLength() : 0; } catch { return 0; }
}

function area(a, b) {
  const w = Math.min(a.x1, b.x1) - Math.max(a.x0, b.x0);
  const h = Math.min(a.y1, b.y1) - Math.max(a.y0, b.y0);
  return w > 0 && h > 0 ? w * h : 0;
}

/** Where each label goes: items [{x, y, text, size, gap, width?}] (the anchor and how far from it
 * the text starts), obstacles [{x0, y0, x1, y1}]; returns per item {x, y} of the baseline's
 * start (relative to its anchor) and its box. */
export function placeLabels(items, obstacles) {
  const placed = [];
  const out = [];
  for (const it of items) {
    const w = textBox(0, 0, it.text, it.size, it.width).x1, line = 1.25 * it.size, g = it.gap;
    const candidates = [
      [g, -g * 0.75], [g, g * 0.45], [-g - w, -g * 0.75], [-g - w, g * 0.45],
      [-w / 2, g + 0.2 * it.size], [-w / 2, -g - 0.8 * it.size],
    ];
    for (let k = 1; k <= 8; k++) candidates.push([g, -g * 0.75 - k * line], [g, g * 0.45 + k * line]);
    let best = null;
    for (const [dx, dy] of candidates) {
      const box = textBox(it.x + dx, it.y + dy, it.text, it.size, it.width);
      const cost = [...placed, ...obstacles].reduce((c, o) => c + area(box, o), 0);
      if (!best || cost < best.cost) best = { dx, dy, box, cost };
      if (cost === 0) break;
    }
    placed.push(best.box);
    out.push({ x: best.dx, y: best.dy, box: best.box });
  }
  return out;
}
