/* Confirmations for what cannot be undone: a drone marked lost, Reset, Reject, a drone sent
 * home or held, a fork stopped. ``confirmAction`` opens the modal dialog (#confirm) and
 * resolves true on Confirm, false on Cancel or Esc. window.isr.confirming says which one is
 * open (for the browser test). */

import { $ } from "./dom.js";
import { state } from "./store.js";

let pending = null;

/** Ask before acting: {title, text, ok: the confirm button's words}. */
export function confirmAction({ title, text, ok = "Confirm" }) {
  const dialog = $("#confirm");
  if (pending) pending(false); // one question at a time: a new one cancels the old
  $("#confirm-title").textContent = title;
  $("#confirm-text").textContent = text || "";
  $("#confirm-ok").textContent = ok;
  dialog.returnValue = "";
  state.confirming = title;
  return new Promise((resolve) => {
    pending = (answer) => { pending = null; state.confirming = null; resolve(answer); };
    if (!dialog.open) dialog.showModal();
    $("#confirm-cancel").focus();
  });
}

/** The dialog's answer goes to the pending question. */
export function initConfirm() {
  const dialog = $("#confirm");
  dialog.addEventListener("close", () => { if (pending) pending(dialog.returnValue === "ok"); });
}
