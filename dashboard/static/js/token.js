/* The control token: taken from ?token= once (then kept out of the address bar and the
 * history), kept in sessionStorage for this tab, editable in the field at the top right.
 * A changed token is handed to onChange (the live stream reconnects with it). */

import { $ } from "./dom.js";
import { state } from "./store.js";
import { toast } from "./toast.js";

/** Load the token into the state and the field, and save it when the field changes. */
export function initToken(onChange = () => {}) {
  const params = new URLSearchParams(location.search);
  const fromUrl = params.get("token");
  if (fromUrl) {
    sessionStorage.setItem("isr-token", fromUrl);
    params.delete("token");
    const rest = params.toString();
    // Keep the token out of the address bar and the history once it is stored.
    history.replaceState(null, "", location.pathname + (rest ? "?" + rest : "") + location.hash);
  }
  state.token = sessionStorage.getItem("isr-token") || "";
  const field = $("#token");
  field.value = state.token;
  $("#token-form").addEventListener("submit", (ev) => { ev.preventDefault(); field.blur(); });
  field.addEventListener("change", () => {
    state.token = field.value.trim();
    sessionStorage.setItem("isr-token", state.token);
    toast("token saved for this tab", "info");
    onChange(state.token);
  });
}
