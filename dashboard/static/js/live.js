/* The websocket client of /ws/live: one "hello" frame (scene, telemetry, events, agent
 * runs, and whether this stream carries the ground truth), then {"type": topic, "data":
 * payload} frames and "stats" frames, each handed to the store, the timeline or the agent
 * tree. It reconnects with a growing delay (up to 10 s) and shows its state in the status
 * line (#st-ws).
 *
 * The control token goes as a subprotocol ("isr.token." + base64url of it, beside
 * "isr.live"), never in the URL: with it the stream carries the hidden SAMs for the truth
 * toggle. A token the server refuses (close code 4401) is said in a toast and left out of
 * the next connections until the token changes; a new token reconnects at once. A hello that
 * says the dashboard serves no live run (live: false) opens the runs list; the events that
 * arrive live (not the hello's history) may raise a banner (banners.js). */

import { addAgent } from "./agents.js";
import { bannerFromEvent } from "./banners.js";
import { $ } from "./dom.js";
import { agentsFromEvent, agentsFromStatus } from "./engines.js";
import { setTruthAvailable } from "./map.js";
import { runOver } from "./run_state.js";
import { openRunsOnLanding } from "./runs.js";
import { renderStatus } from "./status.js";
import { schedule, setScene, setTelemetry, state } from "./store.js";
import { addEvent, clearTimeline } from "./timeline.js";
import { toast } from "./toast.js";

const WS_WRONG_TOKEN = 4401;
const WS_POLICY_VIOLATION = 1008;
let refusedToken = null; // the token the server refused, left out until it changes

function setWs(s) {
  state.wsState = s;
  const el = $("#st-ws");
  el.dataset.state = s;
  el.textContent = "ws " + s;
  schedule(); // the controls follow the connection
}

/** The token as a websocket subprotocol: base64url of its UTF-8 bytes, no padding. */
function tokenProtocol(token) {
  const bytes = new TextEncoder().encode(token);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return "isr.token." + btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Open the websocket (and open it again whenever it closes). */
export function connect() {
  const proto = location.protocol === "https:" ? "wss:" : "ws:";
  const token = state.token && state.token !== refusedToken ? state.token : "";
  const protocols = token ? ["isr.live", tokenProtocol(token)] : ["isr.live"];
  const ws = new WebSocket(`${proto}//${location.host}/ws/live`, protocols);
  state.ws = ws;
  setWs("connecting");
  ws.onopen = () => { state.retry = 0; setWs("open"); };
  ws.onmessage = (ev) => {
    let msg;
    try { msg = JSON.parse(ev.data); } catch (_) { return; }
    onFrame(msg);
  };
  ws.onerror = () => setWs("error");
  ws.onclose = (ev) => {
    if (state.ws !== ws) return; // replaced by reconnect()
    setWs("closed");
    if (ev.code === WS_WRONG_TOKEN) {
      refusedToken = token;
      state.retry = 0;
      toast("the control token was refused: the map shows no ground truth (fix it at the top right)");
    } else if (ev.code === WS_POLICY_VIOLATION) {
      toast("the live stream refused this page: " + (ev.reason || "policy violation"));
    }
    const delay = Math.min(10000, 500 * 2 ** state.retry++);
    setTimeout(connect, delay);
  };
}

/** Connect again at once (the token changed: the stream it opens may differ). */
export function reconnect() {
  const old = state.ws;
  refusedToken = null;
  state.retry = 0;
  state.ws = null;
  if (old) old.close(1000, "token changed");
  connect();
}

function onFrame(msg) {
  switch (msg.type) {
    case "hello":
      setTruthAvailable(Boolean(msg.truth));
      state.live = msg.live !== false;
      state.backUrl = msg.back_url || null;
      state.runId = msg.run_id;
      state.status = msg.status;
      if (msg.scene) setScene(msg.scene);
      if (msg.telemetry) setTelemetry(msg.telemetry);
      clearTimeline();
      state.lastSeq = 0;
      (msg.events || []).forEach(addEvent);
      agentsFromStatus(msg.status); // the agents at the start, then each switch since
      (msg.events || []).forEach(agentsFromEvent);
      state.agents.clear();
      (msg.agents || []).forEach(addAgent);
      renderStatus();
      if (!state.live && !state.runId) openRunsOnLanding();
      schedule();
      break;
    case "telemetry": setTelemetry(msg.data); break;
    case "scene": setScene(msg.data); break;
    case "events": addEvent(msg.data); bannerFromEvent(msg.data); agentsFromEvent(msg.data); break;
    case "agents": addAgent(msg.data); break;
    case "status":
      if (msg.data && msg.data.run_id && state.runId && msg.data.run_id !== state.runId
          && msg.data.state === "starting") {
        clearTimeline();
        state.agents.clear();
        state.agentsDirty = true;
        state.scene = null; state.telemetry = null; // a new run: nothing of the old one
        state.sceneDirty = true;
      }
      state.status = msg.data; state.runId = msg.data.run_id || state.runId; renderStatus();
      agentsFromStatus(msg.data);
      // the run is over: the review panel closes and the map drops the draft, whichever
      // of the final scene and this status arrives last
      if (runOver()) state.sceneDirty = true;
      schedule();
      break;
    case "stats": state.stats = msg; renderStatus(); break;
    default: break; // plan, answers: the scene and the REST answer carry them
  }
}
