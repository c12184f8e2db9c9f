/* The REST client: JSON in and out, with the control token (Authorization: Bearer). A
 * failure is shown in a toast (with the problems the server named) and thrown. */

import { state } from "./store.js";
import { toast } from "./toast.js";

/** One request; resolves with the JSON answer, rejects (after a toast) on any failure. */
export async function api(method, path, body) {
  const headers = { "Content-Type": "application/json" };
  if (state.token) headers["Authorization"] = "Bearer " + state.token;
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (err) {
    toast(`${method} ${path}: the dashboard is unreachable (${err.message})`);
    throw err;
  }
  let data = null;
  try { data = await response.json(); } catch (_) { data = null; }
  if (!response.ok) {
    let msg = (data && data.error) || `${response.status} ${response.statusText}`;
    const problems = (data && data.problems) || [];
    if (problems.length) msg += "\n" + problems.map((p) => `${p.path}: ${p.message}`).join("\n");
    if (response.status === 401) msg += "\n(enter the token in the field at the top right)";
    toast(msg);
    const err = new Error(msg);
    err.status = response.status;
    throw err;
  }
  return data;
}

/** POST /api/commands (text: the operator's words for CUT / REPLAN). */
export const command = (name, text) => api("POST", "/api/commands", text ? { command: name, text } : { command: name });

/** POST /api/edits: one environment edit. */
export const edit = (payload) => api("POST", "/api/edits", payload);
