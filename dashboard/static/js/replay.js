/* The replay of a stored run (/?replay=RUN_ID): the same map, drone markers, timeline and
 * agent tree as live, all at the playhead, plus the playback bar (playback.js), the plan
 * history (plans.js) and the charts (charts.js). No websocket: everything comes from the
 * replay API (/api/runs/{id}/...), with the control token when there is one (then the
 * answers carry the ground truth and the truth switch works).
 *
 * The playhead is state.replay.tick (window.isr.replay.tick). A seek asks for the whole
 * picture at that tick (/state; one request in flight, the latest seek wins) and meanwhile
 * moves the drones to the stored telemetry row at or before it when that row is cached.
 * During play the drones move from telemetry rows fetched in chunks ahead of the playhead
 * (interpolated between rows); the picture is fetched again when an event marker is
 * crossed, every few seconds of mission time, and at the tick where play stops. Each seek's
 * time from the input to the drones drawn at that tick (drones_ms: the stored row alone is
 * asked for too, it comes faster) and to the whole picture drawn (ms) is kept
 * (replay.seeks). */

import { addAgent } from "./agents.js";
import { api } from "./api.js";
import { drawCharts, renderChartHeads } from "./charts.js";
import { $ } from "./dom.js";
import { setTruthAvailable } from "./map.js";
import { markersChanged, renderPlayback } from "./playback.js";
import { renderPlanHead, setPlans } from "./plans.js";
import { schedule, setScene, setTelemetry, state } from "./store.js";
import { fmtTime } from "./format.js";
import { addEvent, clearTimeline } from "./timeline.js";
import { toast } from "./toast.js";

const CHUNK_ROWS = 400; // telemetry rows per request
const CHUNKS_AHEAD = 2; // chunks fetched ahead of the playhead
const STATE_EVERY_S = 5; // during play, the whole picture again every so many mission seconds
const STATE_MIN_WALL_MS = 300; // ... but not more often than this
const MAX_TIMELINE = 600; // timeline lines shown (the newest up to the playhead)
const MAX_SEEKS = 200; // seek latencies kept

/** The replay's state (window.isr.replay). */
export const R = {
  runId: null,
  run: null,
  lastTick: 0,
  hz: 20,
  storedEvery: 5,
  tick: 0, // the playhead (an integer tick)
  playTick: 0, // the playhead during play (fractional)
  playing: false,
  speed: 1, // a number, or "max"
  loopIn: null,
  loopOut: null,
  markers: [],
  events: [],
  plans: [],
  series: null,
  stateTick: null, // the tick of the picture shown
  pending: null, // a seek waiting to be drawn: {tick, t0}
  seeks: [], // {tick, ms}: time from the input to the drones drawn at the tick
  lastSeek: null,
  chunks: new Map(), // "every:index" -> {rows} | {loading: true}
  timelineCount: -1,
  lastFrame: 0,
  lastStateAt: 0,
  lastStateTick: 0,
};

const runUrl = (path) => `/api/runs/${encodeURIComponent(R.runId)}${path}`;
const clamp = (t) => Math.min(Math.max(Math.round(t), 0), R.lastTick);

/** Mission ticks per wall second at the chosen speed ("max": the whole run in about 20 s). */
export function ticksPerSecond() {
  return R.speed === "max" ? Math.max(R.hz * 200, R.lastTick / 20) : R.hz * R.speed;
}

// ----- loading ---------------------------------------------------------------------------

/** Open a run: the page becomes the replay view of it. */
export async function openReplay(runId) {
  R.runId = runId;
  state.replay = R;
  document.body.classList.add("replay");
  document.title = `ISR mission — replay ${runId.slice(0, 8)}`;
  $("#map-hint").textContent = "replay: click a drone, target, SAM or airport to inspect it";
  // a double click on an event of the timeline seeks to its tick
  $("#timeline").addEventListener("dblclick", (ev) => {
    const li = ev.target.closest("li");
    if (li && li.dataset.tick !== undefined) seek(Number(li.dataset.tick), ev.timeStamp);
  });
  const params = new URLSearchParams(location.search);
  const start = Number(params.get("tick") || 0);
  await loadRun(Number.isFinite(start) ? start : 0);
}

/** (Again, after the token changed: the answers may now carry the ground truth.) */
export async function loadRun(startTick = R.tick) {
  setTruthAvailable(Boolean(state.token));
  let info;
  try {
    info = await api("GET", runUrl(""));
  } catch (err) {
    $("#replay-summary").textContent = `run ${R.runId} cannot be opened: ${err.message}`;
    return;
  }
  R.run = info.run;
  R.lastTick = info.last_tick;
  const policy = ((info.run.config || {}).policy) || {};
  R.storedEvery = Number(policy.telemetry_every) || 5;
  R.chunks.clear();
  state.agents.clear();
  (info.agent_runs || []).forEach(addAgent);
  const [events, plans, series] = await Promise.all([
    api("GET", runUrl("/events")).catch(() => ({ events: [], markers: [] })),
    api("GET", runUrl("/plans")).catch(() => ({ plans: [] })),
    api("GET", runUrl("/series?points=600")).catch(() => null),
  ]);
  R.series = series;
  R.hz = (series && series.tick_hz) || R.hz;
  R.events = (events.events || []).map((e) => ({ ...(e.payload || {}), kind: e.kind, tick: e.tick, seq: e.id }));
  R.markers = events.markers || [];
  R.plans = plans.plans || [];
  R.timelineCount = -1;
  describeRun(info);
  markersChanged();
  setPlans(R.plans);
  drawCharts();
  seek(startTick);
}

function scenarioName(sc) {
  if (!sc) return null;
  if (typeof sc === "string") return `scenario ${sc}`;
  return sc.name ? `scenario ${sc.name}` : null;
}

function describeRun(info) {
  const r = info.run, o = r.outcome || {};
  $("#replay-run").textContent = r.run_id;
  const bits = [
    r.status,
    scenarioName(r.scenario),
    r.started_at ? new Date(r.started_at * 1000).toLocaleString() : null,
    `${info.last_tick + 1} ticks`,
    o.total_points !== undefined ? `${o.total_points} points` : null,
    `${info.plan_versions.length} plan versions`,
    `${info.events_count} events`,
    r.parent_run_id ? `forked from ${r.parent_run_id.slice(0, 8)}` : null,
  ];
  $("#replay-summary").textContent = bits.filter(Boolean).join(" · ");
}

// ----- the picture at a tick ---------------------------------------------------------------

let inflight = false;
let wanted = null;

/** Ask for the whole picture at a tick (the latest request wins; one in flight). */
function requestState(tick) {
  wanted = tick;
  R.lastStateAt = performance.now();
  R.lastStateTick = tick;
  if (!inflight) pump();
}

async function pump() {
  inflight = true;
  while (wanted !== null) {
    const tick = wanted;
    wanted = null;
    let scene;
    try {
      scene = await api("GET", runUrl(`/state?tick=${tick}`));
    } catch (_) {
      break; // toast shown
    }
    applyScene(scene);
  }
  inflight = false;
}

function applyScene(scene) {
  setScene(scene);
  R.stateTick = scene.tick;
  if (R.playing) setTelemetry(telemetryAt(R.playTick, true));
  else setTelemetry(scene.tick === R.tick ? null : telemetryAt(R.tick, false));
  if (!R.playing && scene.tick === R.tick) rememberInUrl();
  R.dirty = true;
  schedule();
}

function rememberInUrl() {
  const params = new URLSearchParams(location.search);
  params.set("replay", R.runId);
  params.set("tick", String(R.tick));
  history.replaceState(null, "", location.pathname + "?" + params.toString() + location.hash);
}

/** The stored telemetry row at or before a tick, alone, to move the drones before the whole
 * picture arrives (only while that tick is still the playhead and its picture not shown). */
async function quickRow(tick) {
  const from = Math.max(0, tick - 2 * R.storedEvery);
  let answer;
  try {
    const r = await fetch(runUrl(`/telemetry?from=${from}&to=${tick}`),
                          { headers: state.token ? { Authorization: "Bearer " + state.token } : {} });
    if (!r.ok) return;
    answer = await r.json();
  } catch (_) { return; }
  const row = (answer.rows || []).pop();
  if (!row || R.tick !== tick || R.playing || R.stateTick === tick) return;
  setTelemetry({ tick, row_tick: row.tick, time: tick / R.hz, drones: row.drones, mode: state.scene && state.scene.mode });
}

// ----- telemetry chunks --------------------------------------------------------------------

function everyNow() {
  const rate = ticksPerSecond();
  const k = rate <= R.hz * 20 ? 1 : rate <= R.hz * 200 ? 5 : 20;
  return k * R.storedEvery;
}

function ensureChunks(tick, every = everyNow()) {
  const span = CHUNK_ROWS * every;
  const first = Math.floor(tick / span);
  for (let i = first; i <= first + CHUNKS_AHEAD; i++) {
    if (i * span > R.lastTick) break;
    const key = `${every}:${i}`;
    if (R.chunks.has(key)) continue;
    R.chunks.set(key, { loading: true });
    const from = i * span, to = Math.min(R.lastTick, from + span - 1);
    api("GET", runUrl(`/telemetry?from=${from}&to=${to}&every=${every}`))
      .then((answer) => { R.chunks.set(key, { rows: answer.rows || [] }); })
      .catch(() => { R.chunks.delete(key); });
  }
  if (R.chunks.size > 40) { // forget the chunks far from the playhead
    for (const key of [...R.chunks.keys()]) {
      const [e, i] = key.split(":").map(Number);
      const s = CHUNK_ROWS * e;
      if (Math.abs(i * s - tick) > 8 * s) R.chunks.delete(key);
    }
  }
}

/** The cached telemetry rows around a tick: [at or before, after] (either may be null).
 * exact: only rows at the stored pace (then the first is the stored row at or before the
 * tick, as /state reads it); otherwise thinned rows too (for play). */
function rowsAround(tick, exact) {
  const paces = exact ? [R.storedEvery] : [everyNow(), R.storedEvery, 5 * R.storedEvery, 20 * R.storedEvery];
  for (const every of paces) {
    const span = CHUNK_ROWS * every;
    const i = Math.floor(tick / span);
    const chunk = R.chunks.get(`${every}:${i}`);
    if (!chunk || !chunk.rows || !chunk.rows.length) continue;
    const rows = chunk.rows;
    let lo = 0, hi = rows.length - 1, at = -1;
    while (lo <= hi) { const mid = (lo + hi) >> 1; if (rows[mid].tick <= tick) { at = mid; lo = mid + 1; } else hi = mid - 1; }
    if (at < 0) continue;
    let next = rows[at + 1] || null;
    if (!next) { const n = R.chunks.get(`${every}:${i + 1}`); next = (n && n.rows && n.rows[0]) || null; }
    return [rows[at], next];
  }
  return [null, null];
}

function lerpAngle(a, b, f) {
  let d = b - a;
  while (d > Math.PI) d -= 2 * Math.PI;
  while (d < -Math.PI) d += 2 * Math.PI;
  return a + d * f;
}

/** The drones at a (fractional) tick from the cached rows, interpolated during play; null
 * when no row is cached. */
function telemetryAt(t, interpolate) {
  const [r0, r1] = rowsAround(Math.floor(t), !interpolate);
  if (!r0) return null;
  const drones = {};
  const f = interpolate && r1 && r1.tick > r0.tick ? Math.min(1, (t - r0.tick) / (r1.tick - r0.tick)) : 0;
  for (const [id, a] of Object.entries(r0.drones)) {
    const b = f > 0 ? r1.drones[id] : null;
    drones[id] = b && a.status !== "lost"
      ? { ...a, x: a.x + (b.x - a.x) * f, y: a.y + (b.y - a.y) * f,
          heading: lerpAngle(a.heading || 0, b.heading || 0, f), fuel: a.fuel + (b.fuel - a.fuel) * f }
      : { ...a };
  }
  const tick = Math.floor(t);
  return { tick, row_tick: r0.tick, time: tick / R.hz, drones, mode: state.scene && state.scene.mode };
}

// ----- the playhead --------------------------------------------------------------------------

/** Move the playhead to a tick (t0: when the operator asked, performance.now() clock). */
export function seek(tick, t0 = performance.now()) {
  if (!R.runId) return;
  tick = clamp(tick);
  R.tick = tick;
  R.playTick = tick;
  R.pending = { tick, t0 };
  requestState(tick); // the whole picture (tens of ms: a snapshot and the events since)
  const tel = telemetryAt(tick, false);
  if (tel) setTelemetry(tel);
  else if (!R.playing) quickRow(tick); // the drones first (a few ms: one stored row)
  if (R.playing) ensureChunks(tick);
  R.dirty = true;
  schedule();
}

/** Step by a number of ticks (pausing first). */
export function step(ticks, t0) {
  if (R.playing) pause();
  seek(R.tick + ticks, t0);
}

export function play() {
  if (!R.runId || R.playing) return;
  if (R.tick >= R.lastTick) seek(R.loopIn ?? 0);
  R.playing = true;
  R.pending = null;
  R.lastFrame = performance.now();
  R.playStartTick = R.tick;
  ensureChunks(R.tick);
  requestAnimationFrame(frame);
  R.dirty = true;
  schedule();
}

export function pause() {
  if (!R.playing) return;
  R.playing = false;
  R.tick = clamp(Math.floor(R.playTick));
  seek(R.tick); // the exact picture where play stopped
}

export function togglePlay() { if (R.playing) pause(); else play(); }

export function setSpeed(v) {
  R.speed = v === "max" ? "max" : Number(v);
  if (R.playing) ensureChunks(R.tick);
  R.dirty = true;
  schedule();
}

export function setLoopIn() {
  R.loopIn = R.tick;
  if (R.loopOut !== null && R.loopOut <= R.loopIn) R.loopOut = null;
  R.dirty = true; schedule();
}

export function setLoopOut() {
  R.loopOut = R.tick;
  if (R.loopIn === null || R.loopIn >= R.loopOut) R.loopIn = R.loopIn !== null && R.loopIn < R.loopOut ? R.loopIn : 0;
  R.dirty = true; schedule();
}

export function clearLoop() { R.loopIn = null; R.loopOut = null; R.dirty = true; schedule(); }

function frame(now) {
  if (!R.playing) return;
  const dt = Math.min(1, Math.max(0, (now - R.lastFrame) / 1000));
  R.lastFrame = now;
  const prev = R.tick;
  let t = R.playTick + dt * ticksPerSecond();
  let jumped = false;
  const looping = R.loopOut !== null && R.loopIn !== null;
  if (looping && R.playTick <= R.loopOut && t > R.loopOut) { t = R.loopIn; jumped = true; }
  let end = false;
  if (t >= R.lastTick) { t = R.lastTick; end = true; }
  R.playTick = t;
  R.tick = Math.floor(t);
  const crossed = R.markers.some((m) => m.tick > prev && m.tick <= R.tick);
  const due = Math.abs(R.tick - R.lastStateTick) >= STATE_EVERY_S * R.hz
    && now - R.lastStateAt >= STATE_MIN_WALL_MS;
  if (jumped || crossed || due) requestState(R.tick);
  ensureChunks(R.tick);
  const tel = telemetryAt(t, true);
  if (tel) setTelemetry(tel);
  R.dirty = true;
  schedule();
  if (end) { pause(); return; }
  requestAnimationFrame(frame);
}

// ----- the render pass's part -----------------------------------------------------------------

/** Draw what follows the playhead (called by the render pass, after the map and drones). */
export function renderReplay() {
  const p = R.pending;
  if (p) {
    const now = performance.now();
    const sceneAt = state.scene && state.scene.tick === p.tick && !state.sceneDirty;
    const dronesAt = sceneAt || (state.telemetry && state.telemetry.tick === p.tick && !state.telemetryDirty);
    if (dronesAt && p.drones === undefined) p.drones = now - p.t0;
    if (sceneAt) {
      // drones_ms: to the drones drawn at the tick; ms: to the whole picture drawn
      R.lastSeek = { tick: p.tick, drones_ms: p.drones, ms: now - p.t0 };
      R.seeks.push(R.lastSeek);
      if (R.seeks.length > MAX_SEEKS) R.seeks.shift();
      R.pending = null;
    }
  }
  if (!R.dirty) return;
  R.dirty = false;
  renderPlayback();
  renderChartHeads(R.tick);
  renderPlanHead(state.scene && state.scene.plan_id, R.tick);
  syncTimeline();
  const speed = R.speed === "max" ? "max" : R.speed + "x";
  const pace = state.scene ? state.scene.speed : undefined;
  const recorded = pace === undefined ? "" : ` · recorded at ${pace === null ? "max" : pace + "x"}`;
  $("#st-speed").textContent = `playback ${speed}${R.playing ? " ▶" : " ❚❚"}${recorded}`;
  $("#st-speed").title = "playback: how fast this page replays the run; recorded: the pace the"
    + " mission flew at then (times real time)";
}

function syncTimeline() {
  let lo = 0, hi = R.events.length; // events up to the playhead (recorded in tick order)
  while (lo < hi) { const mid = (lo + hi) >> 1; if (R.events[mid].tick <= R.tick) lo = mid + 1; else hi = mid; }
  if (lo === R.timelineCount) return;
  R.timelineCount = lo;
  clearTimeline();
  state.lastSeq = 0;
  for (const e of R.events.slice(Math.max(0, lo - MAX_TIMELINE), lo)) addEvent(e);
}

// ----- fork ---------------------------------------------------------------------------------

function forkStatus(text) {
  const box = $("#pb-fork-status");
  box.hidden = !text;
  box.querySelector(".text").textContent = text || "";
}

/** POST /api/runs/{id}/fork at the playhead, then open the fork's live page. While the fork
 * starts (a few seconds: its process re-executes the parent up to the tick), the button is
 * disabled and a spinner says "forking at m:ss …"; the server refuses a second fork meanwhile. */
export async function forkHere() {
  if (!R.runId || R.forking) return;
  if (R.playing) pause();
  const button = $("#pb-fork");
  const tick = R.tick;
  R.forking = tick;
  button.disabled = true;
  button.title = "disabled: a fork is starting";
  forkStatus(`forking at ${fmtTime((tick + 1) / R.hz)} (tick ${tick}) …`);
  try {
    const answer = await api("POST", runUrl("/fork"), { tick });
    forkStatus(`fork ${String(answer.run_id).slice(0, 8)} started: opening its page …`);
    toast(`fork ${answer.run_id} started at tick ${tick}`, "info");
    if (answer.url) { location.assign(answer.url); return; }
  } catch (err) {
    if ([404, 405].includes(err.status) || (err.status === 409 && /cannot start runs/.test(err.message)))
      toast(`Fork here is not available on this dashboard (${err.status}): ${err.message}`);
    // other failures: the toast api() showed (the error and its problems)
  }
  R.forking = null;
  button.disabled = false;
  button.title = "start a new live run from the state at the playhead";
  forkStatus(null);
}
