/* The page's state store: what the websocket brought, what the operator chose, and the one
 * render pass per animation frame.
 *
 * Writers mark what changed (sceneDirty, telemetryDirty, agentsDirty) and call schedule();
 * at the next animation frame the renderer set by app.js draws what is dirty. The store is
 * window.isr in the page (for debugging in the console, and for the browser test).
 */

export const state = {
  token: null,
  ws: null,
  wsState: "connecting",
  retry: 0,
  scene: null,
  telemetry: null,
  status: null,
  runId: null,
  lastSeq: 0,
  agents: new Map(),
  stats: null,
  tool: "select",
  truth: false,
  fitKey: "",
  unit: 1,
  dragging: null,
  sceneDirty: false,
  telemetryDirty: false,
  agentsDirty: false,
  usedIds: new Set(),
  selected: null,
  replay: null, // the replay of a stored run (replay.js), null in the live view
  // The render passes' cost (performance.now around each): count, total ms, and the recent
  // passes' ms (bench/dashboard_swarm.py reads them).
  perf: { count: 0, totalMs: 0, samples: [] },
};

let render = () => {};
let frameRequested = false;

/** The function that draws what is dirty, once per animation frame. */
export function setRenderer(fn) {
  render = fn;
}

/** Ask for a render pass at the next animation frame (at most one is pending). */
export function schedule() {
  if (frameRequested) return;
  frameRequested = true;
  requestAnimationFrame(() => {
    frameRequested = false;
    const t0 = performance.now();
    render();
    const ms = performance.now() - t0;
    const perf = state.perf;
    perf.count++; perf.totalMs += ms;
    if (perf.samples.length < 10000) perf.samples.push(ms);
  });
}

/** A new scene (the whole map: environment, drones' paths, draft). */
export function setScene(scene) {
  state.scene = scene;
  state.runId = scene.run_id || state.runId;
  state.sceneDirty = true;
  schedule();
}

/** New telemetry (the drones' positions, headings, fuel). */
export function setTelemetry(t) {
  state.telemetry = t;
  state.telemetryDirty = true;
  schedule();
}
