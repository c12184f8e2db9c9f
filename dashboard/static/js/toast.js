/* The toast: one short message at the bottom of the page (errors stay longer). */

import { $ } from "./dom.js";

let toastTimer = null;

/** Show a message; kind is "error" (the default) or "info". */
export function toast(message, kind = "error") {
  const el = $("#toast");
  el.textContent = message;
  el.className = "show " + kind;
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => { el.className = kind; }, kind === "error" ? 6000 : 2500);
}
