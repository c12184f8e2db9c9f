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

/** POST /api/commands (text: the operator's words for CUT / REPLAN; drone: the drone of
 * RETURN, HOLD, or RESUME of one held drone). */
export function command(name, text, drone) {
  const body = { command: name };
  if (text) body.text = text;
  if (drone !== undefined && drone !== null) body.drone = String(drone);
  return api("POST", "/api/commands", body);
}

/** POST /api/edits: one environment edit. */
export const edit = (payload) => api("POST", "/api/edits", payload);
