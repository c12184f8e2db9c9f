/* DOM and SVG helpers shared by the page's modules. */

const SVGNS = "http://www.w3.org/2000/svg";

/** The first element that matches a CSS selector. */
export const $ = (sel) => document.querySelector(sel);

/** A new SVG element with these attributes (null and undefined ones left out), appended to
 * parent if given. */
export function el(tag, attrs, parent) {
  const node = document.createElementNS(SVGNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) node.setAttribute(k, v);
  if (parent) parent.appendChild(node);
  return node;
}

/** A polyline's points attribute from [[x, y], ...]. */
export const pts = (poly) => poly.map((p) => `${p[0]},${p[1]}`).join(" ");

/** Text inside the flipped #world (y up), unflipped locally so that it reads upright. */
export function flippedText(parent, x, y, text, size, attrs) {
  const t = el("text", { x, y: -y, "font-size": size, transform: "scale(1,-1)", ...(attrs || {}) }, parent);
  t.textContent = text;
  return t;
}
