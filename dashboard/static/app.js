/* ISR mission dashboard: plain JavaScript ES modules, no build step, no CDN.
 *
 * State comes from the websocket /ws/live (js/live.js) into one store (js/store.js). Drone
 * markers move with every telemetry frame (drawn at most once per animation frame); the
 * rest of the map is redrawn from each scene. Commands, edits and questions go to the REST
 * API with the control token (js/api.js, Authorization: Bearer); the websocket gets it as a
 * subprotocol (js/live.js), and with it the ground truth. Errors show in a toast.
 *
 * No inline script, style or event handler anywhere: the page's Content-Security-Policy
 * allows scripts and styles from this origin only.
 *
 * The map is an SVG in km with y up: #world is flipped (scale(1,-1)) inside a viewBox fitted
 * to the scene, so #world.getScreenCTM() maps km to screen pixels.
 *
 * The modules, one idea each:
 *   store.js     the state and the render pass      live.js      the websocket client
 *   api.js       the REST client with the token     token.js     the control token
 *   map.js       airports, targets, SAMs, paths     drones.js    the drone markers
 *   timeline.js  the events and their details       agents.js    the agent trace tree
 *   controls.js  commands and speed                 draft.js     the draft review panel
 *   tools.js     the edit tools on the map          ask.js       the question box
 *   status.js    the status line                    toast.js     messages
 *   engines.js   the agent engines' health (GET /api/engines)
 *   viewport.js  zoom, pan, fit, scale, cursor      fleet_table.js  the fleet table
 *   labels.js    labels placed clear of each other and of every marker
 *   layout.js    resizable, foldable panels, remembered   layers.js  layer switches, legend
 *   select.js    the selection and its ring   inspector.js   the selection in words, actions
 *   confirm.js   confirmations                banners.js     safety, PNR, refused orders
 *   startup.js   starting / planning / no live run, over the map
 *   run_state.js whether there is a live run, over, starting; its mission time now
 *   hazard.js    a SAM ahead of a plan in force, in words that count down
 *   dom.js, format.js: helpers
 *
 * The replay of a stored run (issue 14) is the same page in another mode: /?replay=RUN_ID
 * (body.replay) opens no websocket; the map, drones, timeline and agent tree show the run at
 * the playhead, from the replay API (/api/runs/{id}/...). /#runs (the header's Runs button,
 * live or replay) lists the stored runs over the page.
 *   replay.js    the playhead, loading, play     playback.js  the playback bar and keys
 *   plans.js     the plan history panel          charts.js    the charts under the map
 *   runs.js      the run picker
 * /?compare=RUN_A,RUN_B puts two stored runs side by side (body.compare; the runs picker's
 * Compare button opens it): compare.js   the outcome table, both tracks, the divergence
 * This module wires them: what a render pass draws, and what starts when the page loads.
 */

import { renderAgents } from "./js/agents.js";
import { initAsk } from "./js/ask.js";
import { banners, checkPnr, renderBanners } from "./js/banners.js";
import { initCharts } from "./js/charts.js";
import { loadCompare, openCompare } from "./js/compare.js";
import { initConfirm } from "./js/confirm.js";
import { initControls, renderControls } from "./js/controls.js";
import { renderDraftCountdown, renderDraftPanel } from "./js/draft.js";
import { droneColour, droneIds, renderDrones } from "./js/drones.js";
import { initEngines } from "./js/engines.js";
import { initFleet, renderFleet } from "./js/fleet_table.js";
import { initInspector, renderInspector } from "./js/inspector.js";
import { initLayers, renderDroneLayers } from "./js/layers.js";
import { initLayout } from "./js/layout.js";
import { connect, reconnect } from "./js/live.js";
import { drawMap, initTruthToggle } from "./js/map.js";
import { initPlayback } from "./js/playback.js";
import { loadRun, openReplay, renderReplay } from "./js/replay.js";
import { initRuns } from "./js/runs.js";
import { initSelection } from "./js/select.js";
import { renderStartup } from "./js/startup.js";
import { renderStatus } from "./js/status.js";
import { setRenderer, state } from "./js/store.js";
import { focusPending, initTimeline } from "./js/timeline.js";
import { initToken } from "./js/token.js";
import { initTools, rememberIds, setTool } from "./js/tools.js";
import { initViewport } from "./js/viewport.js";

window.isr = state; // for debugging in the console (and the browser test)
state.banners = banners;

function renderScene() {
  const scene = state.scene;
  if (!scene) return;
  renderDroneLayers(droneIds(), (id) => droneColour(id));
  drawMap(scene);
  renderDraftPanel(scene);
  rememberIds(scene);
  focusPending();
}

// One pass per animation frame: what is dirty, then the status line.
setRenderer(() => {
  const fleetDirty = state.sceneDirty || state.telemetryDirty || state.fleetDirty;
  state.fleetDirty = false;
  if (state.sceneDirty && !state.dragging) { state.sceneDirty = false; renderScene(); }
  if (state.telemetryDirty) { state.telemetryDirty = false; renderDrones(); }
  if (fleetDirty) { renderFleet(); checkPnr(); }
  if (fleetDirty || state.inspectorDirty) { state.inspectorDirty = false; renderInspector(); }
  if (state.agentsDirty) { state.agentsDirty = false; renderAgents(); }
  renderDraftCountdown();
  renderStatus();
  renderControls();
  renderStartup();
  renderBanners();
  if (state.replay) renderReplay();
});

const params = new URLSearchParams(location.search);
const replayRun = params.get("replay");
const compareRuns = replayRun ? null : params.get("compare");
initToken(replayRun ? () => loadRun() : compareRuns !== null ? () => loadCompare() : reconnect);
initLayout();
initLayers();
initConfirm();
initControls();
initTools();
initViewport(); // after the tools: a drag that moves a target is not a pan
initFleet();
initSelection();
initInspector();
initTruthToggle();
initTimeline();
initAsk();
setTool("select");
initRuns();
if (replayRun) {
  initPlayback();
  initCharts();
  openReplay(replayRun);
} else if (compareRuns !== null) openCompare(compareRuns);
else connect();
if (!replayRun && compareRuns === null) initEngines(); // the live run's engines and their health
