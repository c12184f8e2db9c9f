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
  if (!response.ok) failed(response, data);
  return data;
}

/** A refused request: toast what the server said (its problems too) and throw it. */
function failed(response, data) {
  let msg = (data && data.error) || `${response.status} ${response.statusText}`;
  const problems = (data && data.problems) || [];
  if (problems.length) msg += "\n" + problems.map((p) => `${p.path}: ${p.message}`).join("\n");
  if (response.status === 401) msg += "\n(enter the token in the field at the top right)";
  toast(msg);
  const err = new Error(msg);
  err.status = response.status;
  throw err;
}

/** POST `body` to an SSE route (text/event-stream) and call `onEvent(name, data)` for each
 * event as it arrives; resolves when the stream closes. A refusal before the stream (no
 * token, no live run, a bad body) is toasted and thrown as by `api`. */
export async function apiStream(path, body, onEvent) {
  const headers = { "Content-Type": "application/json", "Accept": "text/event-stream" };
  if (state.token) headers["Authorization"] = "Bearer " + state.token;
  let response;
  try {
    response = await fetch(path, { method: "POST", headers, body: JSON.stringify(body) });
  } catch (err) {
    toast(`POST ${path}: the dashboard is unreachable (${err.message})`);
    throw err;
  }
  if (!response.ok) {
    let data = null;
    try { data = await response.json(); } catch (_) { data = null; }
    failed(response, data);
  }
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) { // one frame: id, event, data lines
      const frame = buffer.slice(0, end); buffer = buffer.slice(end + 2);
      let name = "message", data = "";
      for (const line of frame.split("\n")) {
        if (line.startsWith("event: ")) name = line.slice(7);
        else if (line.startsWith("data: ")) data += line.slice(6);
      }
      onEvent(name, data ? JSON.parse(data) : null);
    }
  }
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
