/* ISR mission dashboard: plain JavaScript, no build step, no CDN.
 *
 * State comes from the websocket /ws/live: one "hello" frame (scene, telemetry, events,
 * agent runs), then {"type": topic, "data": payload} frames and "stats" frames. Drone
 * markers move with every telemetry frame (drawn at most once per animation frame); the
 * rest of the map is redrawn from each scene. Commands, edits and questions go to the REST
 * API with the control token (Authorization: Bearer). Errors show in a toast.
 *
 * The map is an SVG in km with y up: #world is flipped (scale(1,-1)) inside a viewBox fitted
 * to the scene, so #world.getScreenCTM() maps km to screen pixels.
 */
"use strict";

(() => {
  const SVGNS = "http://www.w3.org/2000/svg";
  const PALETTE = ["#4fc3f7", "#ffb74d", "#ba68c8", "#81c784", "#f06292", "#fff176",
                   "#4dd0e1", "#a1887f", "#90caf9", "#e6ee9c"];
  const MAX_EVENTS = 600;   // timeline items kept in the page
  const VERBOSE_KINDS = new Set(["command_applied", "drone_holding"]);
  const $ = (sel) => document.querySelector(sel);

  const state = {
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
  };
  window.isr = state; // for debugging in the console (and the browser test)

  // ----- token -------------------------------------------------------------------------

  function initToken() {
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
    });
  }

  // ----- toast & REST ------------------------------------------------------------------

  let toastTimer = null;
  function toast(message, kind = "error") {
    const el = $("#toast");
    el.textContent = message;
    el.className = "show " + kind;
    clearTimeout(toastTimer);
    toastTimer = setTimeout(() => { el.className = kind; }, kind === "error" ? 6000 : 2500);
  }

  async function api(method, path, body) {
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

  const command = (name, text) => api("POST", "/api/commands", text ? { command: name, text } : { command: name });
  const edit = (payload) => api("POST", "/api/edits", payload);

  // ----- websocket ---------------------------------------------------------------------

  function setWs(s) {
    state.wsState = s;
    const el = $("#st-ws");
    el.dataset.state = s;
    el.textContent = "ws " + s;
  }

  function connect() {
    const proto = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${proto}//${location.host}/ws/live`);
    state.ws = ws;
    setWs("connecting");
    ws.onopen = () => { state.retry = 0; setWs("open"); };
    ws.onmessage = (ev) => {
      let msg;
      try { msg = JSON.parse(ev.data); } catch (_) { return; }
      onFrame(msg);
    };
    ws.onerror = () => setWs("error");
    ws.onclose = () => {
      setWs("closed");
      const delay = Math.min(10000, 500 * 2 ** state.retry++);
      setTimeout(connect, delay);
    };
  }

  function onFrame(msg) {
    switch (msg.type) {
      case "hello":
        state.runId = msg.run_id;
        state.status = msg.status;
        if (msg.scene) setScene(msg.scene);
        if (msg.telemetry) setTelemetry(msg.telemetry);
        $("#timeline").replaceChildren();
        state.lastSeq = 0;
        (msg.events || []).forEach(addEvent);
        state.agents.clear();
        (msg.agents || []).forEach(addAgent);
        renderStatus();
        break;
      case "telemetry": setTelemetry(msg.data); break;
      case "scene": setScene(msg.data); break;
      case "events": addEvent(msg.data); break;
      case "agents": addAgent(msg.data); break;
      case "status":
        if (msg.data && msg.data.run_id && state.runId && msg.data.run_id !== state.runId
            && msg.data.state === "starting") {
          $("#timeline").replaceChildren();
          state.agents.clear();
          state.agentsDirty = true;
        }
        state.status = msg.data; state.runId = msg.data.run_id || state.runId; renderStatus();
        break;
      case "stats": state.stats = msg; renderStatus(); break;
      default: break; // plan, answers: the scene and the REST answer carry them
    }
  }

  function setScene(scene) {
    state.scene = scene;
    state.runId = scene.run_id || state.runId;
    state.sceneDirty = true;
    schedule();
  }

  function setTelemetry(t) {
    state.telemetry = t;
    state.telemetryDirty = true;
    schedule();
  }

  let frameRequested = false;
  function schedule() {
    if (frameRequested) return;
    frameRequested = true;
    requestAnimationFrame(() => {
      frameRequested = false;
      if (state.sceneDirty && !state.dragging) { state.sceneDirty = false; renderScene(); }
      if (state.telemetryDirty) { state.telemetryDirty = false; renderDrones(); }
      if (state.agentsDirty) { state.agentsDirty = false; renderAgents(); }
      renderStatus();
    });
  }

  // ----- svg helpers -------------------------------------------------------------------

  function el(tag, attrs, parent) {
    const node = document.createElementNS(SVGNS, tag);
    for (const [k, v] of Object.entries(attrs || {})) if (v !== undefined && v !== null) node.setAttribute(k, v);
    if (parent) parent.appendChild(node);
    return node;
  }

  const pts = (poly) => poly.map((p) => `${p[0]},${p[1]}`).join(" ");

  function droneColour(id) {
    const ids = Object.keys((state.scene && state.scene.drones) || {}).sort(
      (a, b) => a.localeCompare(b, undefined, { numeric: true }));
    const i = Math.max(0, ids.indexOf(id));
    return PALETTE[i % PALETTE.length];
  }

  const label = (id) => (/^\d+$/.test(id) ? "D" + id : id);

  function flippedText(parent, x, y, text, size, attrs) {
    // text inside the flipped #world: unflip it locally so it reads upright
    const t = el("text", { x, y: -y, "font-size": size, transform: "scale(1,-1)", ...(attrs || {}) }, parent);
    t.textContent = text;
    return t;
  }

  function fit(scene) {
    const xs = [], ys = [];
    const add = (x, y, r = 0) => { xs.push(x - r, x + r); ys.push(y - r, y + r); };
    (scene.airports || []).forEach((a) => add(a.x, a.y));
    (scene.targets || []).forEach((t) => add(t.x, t.y));
    (scene.sams || []).forEach((s) => { if (s.known || state.truth) add(s.x, s.y, s.range); });
    Object.values(scene.drones || {}).forEach((d) => add(d.x, d.y));
    if (!xs.length) return;
    let minx = Math.min(...xs), maxx = Math.max(...xs), miny = Math.min(...ys), maxy = Math.max(...ys);
    const span = Math.max(maxx - minx, maxy - miny, 10);
    const pad = span * 0.06;
    minx -= pad; maxx += pad; miny -= pad; maxy += pad;
    // Round outwards so small moves do not refit the map on every scene.
    const step = span / 20;
    minx = Math.floor(minx / step) * step; miny = Math.floor(miny / step) * step;
    maxx = Math.ceil(maxx / step) * step; maxy = Math.ceil(maxy / step) * step;
    const key = [minx, miny, maxx, maxy].map((v) => v.toFixed(3)).join(",");
    state.unit = span / 90;
    if (key === state.fitKey) return;
    state.fitKey = key;
    $("#map").setAttribute("viewBox", `${minx} ${-maxy} ${maxx - minx} ${maxy - miny}`);
    drawGrid(minx, miny, maxx, maxy);
  }

  function drawGrid(minx, miny, maxx, maxy) {
    const g = $("#l-grid");
    g.replaceChildren();
    g.setAttribute("class", "grid");
    const span = Math.max(maxx - minx, maxy - miny);
    const step = [1, 2, 5, 10, 20, 50, 100, 200, 500].find((s) => span / s <= 12) || 1000;
    for (let x = Math.ceil(minx / step) * step; x <= maxx; x += step)
      el("line", { x1: x, y1: miny, x2: x, y2: maxy, "vector-effect": "non-scaling-stroke" }, g);
    for (let y = Math.ceil(miny / step) * step; y <= maxy; y += step)
      el("line", { x1: minx, y1: y, x2: maxx, y2: y, "vector-effect": "non-scaling-stroke" }, g);
  }

  // ----- the map -----------------------------------------------------------------------

  function renderScene() {
    const scene = state.scene;
    if (!scene) return;
    fit(scene);
    const u = state.unit;
    renderSams(scene, u);
    renderPaths(scene);
    renderDraft(scene);
    renderAirports(scene, u);
    renderTargets(scene, u);
    renderDrones();
    renderDraftPanel(scene);
    for (const t of scene.targets || []) state.usedIds.add(t.id);
    for (const s of scene.sams || []) state.usedIds.add(s.id);
  }

  function renderSams(scene, u) {
    const g = $("#l-sams");
    g.replaceChildren();
    for (const s of scene.sams || []) {
      if (!s.known && !state.truth) continue;
      const grp = el("g", { class: "sam" + (s.known ? "" : " hidden"), "data-sam-id": s.id,
                            "data-known": s.known ? "1" : "0", transform: `translate(${s.x},${s.y})` }, g);
      el("circle", { class: "zone", r: s.range, "vector-effect": "non-scaling-stroke", "stroke-width": 1.5 }, grp);
      el("circle", { class: "centre", r: u * 0.35 }, grp);
      flippedText(grp, u * 0.6, -u * 0.3, s.id + (s.known ? "" : " (hidden)"), u * 1.1);
    }
  }

  function renderPaths(scene) {
    const layers = { flown: $("#l-flown"), frozen: $("#l-frozen"), planned: $("#l-planned") };
    for (const [name, g] of Object.entries(layers)) {
      g.replaceChildren();
      g.setAttribute("class", name);
    }
    for (const [id, d] of Object.entries(scene.drones || {})) {
      const colour = droneColour(id);
      for (const name of ["flown", "frozen", "planned"]) {
        const poly = d[name] || [];
        if (poly.length < 2) continue;
        el("polyline", { points: pts(poly), stroke: colour, "data-drone-id": id,
                         "vector-effect": "non-scaling-stroke" }, layers[name]);
      }
    }
  }

  function renderDraft(scene) {
    const g = $("#l-draft");
    g.replaceChildren();
    g.setAttribute("class", "draft");
    const draft = scene.draft;
    if (!draft) return;
    for (const [id, r] of Object.entries(draft.routes || {})) {
      if ((r.path || []).length < 2) continue;
      el("polyline", { points: pts(r.path), "data-drone-id": id, "vector-effect": "non-scaling-stroke" }, g);
    }
  }

  function renderAirports(scene, u) {
    const g = $("#l-airports");
    g.replaceChildren();
    for (const a of scene.airports || []) {
      const grp = el("g", { class: "airport", "data-airport-id": a.id, transform: `translate(${a.x},${a.y})` }, g);
      el("rect", { x: -u * 0.8, y: -u * 0.8, width: u * 1.6, height: u * 1.6, "vector-effect": "non-scaling-stroke" }, grp);
      flippedText(grp, u * 1.1, -u * 0.9, a.id, u * 1.3);
    }
  }

  function targetRadius(t, u) { return u * (0.75 + 0.085 * Math.min(Math.max(t.priority, 0), 12)); }

  function renderTargets(scene, u) {
    const g = $("#l-targets");
    g.replaceChildren();
    for (const t of scene.targets || []) {
      const r = targetRadius(t, u);
      const grp = el("g", { class: `target ${t.status}`, "data-target-id": t.id, "data-status": t.status,
                            transform: `translate(${t.x},${t.y})` }, g);
      el("circle", { r, "vector-effect": "non-scaling-stroke", "stroke-width": 1 }, grp);
      flippedText(grp, 0, -r * 0.38, t.type, r * 1.05, { "text-anchor": "middle" });
      flippedText(grp, r + u * 0.25, -r * 0.1 - u * 0.9, t.id, u * 1.0, { class: "tid" });
    }
  }

  function ringPath(r, frac) {
    frac = Math.min(Math.max(frac, 0), 1);
    if (frac >= 0.999) return `M ${r} 0 A ${r} ${r} 0 1 1 ${-r} 0 A ${r} ${r} 0 1 1 ${r} 0`;
    const a = frac * 2 * Math.PI;
    return `M ${r} 0 A ${r} ${r} 0 ${frac > 0.5 ? 1 : 0} 1 ${r * Math.cos(a)} ${r * Math.sin(a)}`;
  }

  function renderDrones() {
    const scene = state.scene;
    if (!scene) return;
    const g = $("#l-drones");
    const u = state.unit;
    const tel = (state.telemetry && state.telemetry.drones) || {};
    const seen = new Set();
    for (const [id, d] of Object.entries(scene.drones || {})) {
      seen.add(id);
      const live = tel[id] || {};
      const x = live.x ?? d.x, y = live.y ?? d.y, heading = live.heading ?? d.heading ?? 0;
      const fuel = live.fuel ?? d.fuel, status = live.status || d.status;
      let grp = g.querySelector(`g.drone[data-drone-id="${CSS.escape(id)}"]`);
      if (!grp || grp.dataset.unit !== String(u)) {
        if (grp) grp.remove();
        grp = el("g", { class: "drone", "data-drone-id": id, "data-unit": String(u) }, g);
        el("circle", { class: "ring-bg", r: u * 2.1, "vector-effect": "non-scaling-stroke", "stroke-width": 3 }, grp);
        el("path", { class: "ring", "vector-effect": "non-scaling-stroke", "stroke-width": 3 }, grp);
        const body = el("g", { class: "body" }, grp);
        el("polygon", { points: `${1.7 * u},0 ${-1.1 * u},${1.0 * u} ${-0.5 * u},0 ${-1.1 * u},${-1.0 * u}`,
                        fill: droneColour(id), "vector-effect": "non-scaling-stroke", "stroke-width": 1 }, body);
        flippedText(grp, u * 2.4, -u * 1.6, label(id), u * 1.25, { class: "dlabel" });
      }
      grp.setAttribute("transform", `translate(${x},${y})`);
      grp.dataset.x = x; grp.dataset.y = y; grp.dataset.status = status;
      grp.querySelector("g.body").setAttribute("transform", `rotate(${heading * 180 / Math.PI})`);
      grp.classList.toggle("lost", status === "lost");
      grp.classList.toggle("landed", status === "landed");
      const frac = d.budget > 0 ? fuel / d.budget : 0;
      const ring = grp.querySelector("path.ring");
      ring.setAttribute("d", ringPath(u * 2.1, frac));
      const margin = d.margin_km;
      ring.setAttribute("stroke", margin !== null && margin !== undefined && margin < 0 ? "#ef5350"
                                  : frac < 0.25 ? "#ffa726" : "#66bb6a");
      grp.querySelector("text.dlabel").textContent =
        `${label(id)} ${Math.round(fuel)} km` + (margin !== null && margin !== undefined ? ` (${margin >= 0 ? "+" : ""}${Math.round(margin)})` : "");
    }
    for (const grp of [...g.children]) if (!seen.has(grp.dataset.droneId)) grp.remove();
  }

  // ----- draft review ------------------------------------------------------------------

  function renderDraftPanel(scene) {
    const panel = $("#draft");
    const draft = scene.draft;
    panel.hidden = !draft;
    if (!draft) return;
    const diff = draft.diff || {};
    const sign = (v, digits = 0) => (v >= 0 ? "+" : "") + Number(v).toFixed(digits);
    $("#draft-summary").textContent =
      `${draft.points} points (${sign(diff.points || 0)}), fuel ${Number(draft.fuel).toFixed(1)} km (${sign(diff.fuel || 0, 1)})`;
    const list = $("#draft-diff");
    list.replaceChildren();
    const routes = diff.routes || {};
    if (!Object.keys(routes).length) {
      const li = document.createElement("li"); li.textContent = "same targets per drone"; list.appendChild(li);
    }
    for (const [id, r] of Object.entries(routes)) {
      const li = document.createElement("li");
      li.dataset.droneId = id;
      li.innerHTML = `<b>${label(id)}</b> `;
      const add = document.createElement("span"); add.className = "plus";
      add.textContent = (r.added || []).length ? "+" + r.added.join(" +") + " " : "";
      const rem = document.createElement("span"); rem.className = "minus";
      rem.textContent = (r.removed || []).length ? "−" + r.removed.join(" −") : "";
      li.append(add, rem);
      if (!r.added.length && !r.removed.length) li.append("reordered");
      list.appendChild(li);
    }
  }

  // ----- status line -------------------------------------------------------------------

  function fmtTime(s) {
    if (s === undefined || s === null) return "–";
    s = Math.floor(s);
    const h = Math.floor(s / 3600), m = Math.floor((s % 3600) / 60), sec = s % 60;
    return (h ? h + ":" + String(m).padStart(2, "0") : m) + ":" + String(sec).padStart(2, "0");
  }

  function renderStatus() {
    const scene = state.scene || {};
    const tel = state.telemetry || {};
    const ended = state.status && ["ended", "crashed"].includes(state.status.state);
    $("#st-run").textContent = "run " + (state.runId ? state.runId.slice(0, 8) : "–");
    $("#st-run").title = state.runId || "";
    $("#st-tick").textContent = "tick " + (tel.tick ?? scene.tick ?? "–");
    $("#st-time").textContent = "t " + fmtTime(tel.time ?? scene.time);
    const mode = ended ? state.status.state.toUpperCase() : (tel.mode || scene.mode || "–");
    const modeEl = $("#st-mode");
    modeEl.textContent = mode; modeEl.dataset.mode = mode;
    const speed = scene.speed;
    $("#st-speed").textContent = "speed " + (speed === null || speed === undefined ? (scene.run_id ? "max" : "–") : speed + "x");
    for (const b of document.querySelectorAll("#speeds button")) {
      const v = b.dataset.speed;
      b.classList.toggle("active", (v === "max" && speed === null) || Number(v) === speed);
    }
    const collected = Object.values(tel.drones || {}).reduce((s, d) => s + (d.points || 0), 0)
      || scene.collected_points || 0;
    $("#st-points").textContent = `points ${collected} collected · ${scene.planned_points ?? "–"} planned`;
    const st = state.stats;
    $("#st-dropped").textContent = "dropped " + (st ? st.dropped_total : 0);
    if (st) $("#st-dropped").title = "dropped per topic: " + JSON.stringify(st.dropped) + `, pending ${st.pending}`;
  }

  // ----- timeline ----------------------------------------------------------------------

  function category(kind) {
    if (["COMMIT_PLAN", "DRAFT_READY", "REVIEW", "PLAN_REJECTED", "STALE_DRAFT"].includes(kind)) return "plan";
    if (["CUT_AND_FREEZE", "REPLAN_REMAINDER", "REPLAN_FAILED", "CONTINUE", "DIVERT", "RETURN_TO_BASE", "RESET", "PAUSE", "CONSTRAINTS"].includes(kind)) return "replan";
    if (["sam_detected", "drone_lost", "target_missed"].includes(kind)) return "threat";
    if (["edit_applied", "edit_rejected"].includes(kind)) return "edit";
    if (["HUMAN_COMMAND", "COMMAND_IGNORED", "CMD_REJECTED"].includes(kind)) return "command";
    return "sim";
  }

  const ms = (v) => (v === undefined || v === null ? "" : ` in ${Math.round(v)} ms`);
  const short = (id) => (id ? String(id).slice(0, 6) : "");

  function summary(e) {
    switch (e.kind) {
      case "COMMIT_PLAN": return `plan ${short(e.plan_id)}: ${e.points} pts` + (e.trigger ? ` (${e.trigger})` : e.cut_tick !== undefined ? ` from tick ${e.cut_tick}` : "");
      case "CUT_AND_FREEZE": return `cut at tick ${e.cut_tick}: ${e.trigger}`;
      case "REPLAN_REMAINDER": return `replanning: ${e.trigger}`;
      case "DRAFT_READY": return `draft ${e.points} pts${ms(e.latency_ms)}` + (e.agent_applied ? " (agents)" : "");
      case "REVIEW": return `waiting for review: ${e.points} pts`;
      case "REPLAN_FAILED": return `${e.reason || ""}${ms(e.latency_ms)}`;
      case "STALE_DRAFT": return `stale draft (cut ${e.cut_tick} passed): replanning`;
      case "PLAN_REJECTED": return `rejected: ${e.reason}`;
      case "CONTINUE": return e.change ? `${e.change}: ${e.reason || "no replan"}` : `resumed ${(e.resumed || []).map(label).join(" ")}`;
      case "DIVERT": return `${label(e.drone)} holds off ${e.sam}`;
      case "RETURN_TO_BASE": return `${label(e.drone)} -> ${e.airport} (fuel ${Math.round(e.fuel)})`;
      case "PAUSE": return `holding ${(e.holding || []).map(label).join(" ")}`;
      case "HUMAN_COMMAND": return `${e.command}${e.text ? ": " + e.text : ""} (${e.source})`;
      case "COMMAND_IGNORED": return `${e.command}: ${e.reason}`;
      case "CMD_REJECTED": return e.reason;
      case "CONSTRAINTS": return e.text;
      case "edit_applied": return describeEdit(e.edit);
      case "edit_rejected": return `${describeEdit(e.edit)}: ${e.reason}`;
      case "sam_detected": return `${label(e.drone)} detected ${e.sam} (range ${e.range})`;
      case "drone_lost": return `${label(e.drone)}: ${e.reason}${e.sam ? " " + e.sam : ""}`;
      case "drone_landed": return `${label(e.drone)} at ${e.airport}`;
      case "target_collected": return `${label(e.drone)} ${e.target} +${e.points}`;
      case "target_missed": return `${label(e.drone)} ${e.target}: ${e.reason}`;
      case "command_applied": return `${label(e.drone)} ${e.command}: ${e.detail}`;
      case "command_rejected": return `${label(e.drone)} ${e.command}: ${e.reason}`;
      case "drone_holding": return `${label(e.drone)} (${e.reason})`;
      default: return "";
    }
  }

  function describeEdit(ed) {
    if (!ed) return "";
    const at = ed.pos ? `(${ed.pos.map((v) => Math.round(v * 10) / 10).join(", ")})` :
               ed.x !== undefined ? `(${Math.round(ed.x * 10) / 10}, ${Math.round(ed.y * 10) / 10})` : "";
    return `${ed.source || ""} ${ed.op} ${ed.id || ed.drone || ""} ${at}${ed.range ? " r " + ed.range : ""}`.trim();
  }

  function addEvent(e) {
    if (!e || !e.kind) return;
    const list = $("#timeline");
    const seq = e.seq || ++state.lastSeq;
    state.lastSeq = Math.max(state.lastSeq, seq);
    const li = document.createElement("li");
    const cat = category(e.kind);
    li.className = "c-" + cat + (VERBOSE_KINDS.has(e.kind) ? " verbose" : "");
    li.dataset.kind = e.kind;
    li.dataset.seq = seq;
    li.dataset.tick = e.tick;
    const hz = (state.scene && state.scene.tick_hz) || 20;
    const t = document.createElement("span"); t.className = "t"; t.textContent = fmtTime((e.tick || 0) / hz);
    const k = document.createElement("span"); k.className = "kind"; k.textContent = e.kind;
    const s = document.createElement("span"); s.className = "sum"; s.textContent = summary(e);
    s.title = s.textContent;
    li.append(t, k, s);
    li._event = e;
    list.prepend(li); // newest on top
    while (list.childElementCount > MAX_EVENTS) list.lastElementChild.remove();
  }

  function showDetail(obj, li) {
    const pre = $("#detail");
    for (const open of document.querySelectorAll("#timeline li.open")) open.classList.remove("open");
    if (!obj || (li && pre.dataset.seq === li.dataset.seq && !pre.hidden)) {
      pre.hidden = true; pre.dataset.seq = ""; return;
    }
    if (li) { li.classList.add("open"); pre.dataset.seq = li.dataset.seq; } else pre.dataset.seq = "";
    pre.textContent = JSON.stringify(obj, null, 2);
    pre.hidden = false;
  }

  // ----- agent runs --------------------------------------------------------------------

  function addAgent(record) {
    if (!record || !record.run_id) return;
    state.agents.delete(record.run_id);
    state.agents.set(record.run_id, record);
    while (state.agents.size > 1000) state.agents.delete(state.agents.keys().next().value);
    state.agentsDirty = true;
    schedule();
  }

  function renderAgents() {
    const box = $("#agents");
    const open = new Set([...box.querySelectorAll("details[open]")].map((d) => d.dataset.runId));
    const nodes = new Map();
    for (const [id, r] of state.agents) nodes.set(id, { r, children: [] });
    const roots = [];
    for (const [id, n] of nodes) {
      const parent = n.r.parent_run_id;
      if (parent && parent !== id && nodes.has(parent)) nodes.get(parent).children.push(n);
      else roots.push(n);
    }
    box.replaceChildren();
    if (!roots.length) { box.innerHTML = '<p class="muted">no agent runs yet</p>'; return; }
    for (const n of roots.reverse()) box.appendChild(agentNode(n, open));
  }

  function agentNode(n, open) {
    const r = n.r;
    const d = document.createElement("details");
    d.dataset.runId = r.run_id;
    if (open.has(r.run_id)) d.open = true;
    const s = document.createElement("summary");
    const tokens = r.tokens_in || r.tokens_out ? ` ${r.tokens_in ?? 0}/${r.tokens_out ?? 0} tok` : "";
    const name = document.createElement("span"); name.className = "agent"; name.textContent = r.agent;
    const facts = document.createElement("span");
    facts.textContent = ` ${r.engine}${r.model ? "/" + r.model : ""} · ${Math.round(r.duration_ms || 0)} ms${tokens}` +
      (r.tick !== null && r.tick !== undefined ? ` · tick ${r.tick}` : "") + " · ";
    const verdict = document.createElement("span");
    verdict.className = r.error ? "error" : r.applied ? "applied" : "not-applied";
    verdict.textContent = r.error ? "error: " + r.error : r.applied ? "applied" : "not applied";
    s.append(name, facts, verdict);
    d.appendChild(s);
    if (r.validated_output) {
      const pre = document.createElement("pre");
      pre.textContent = JSON.stringify(r.validated_output, null, 2);
      d.appendChild(pre);
    }
    if ((r.clamp_actions || []).length) {
      const pre = document.createElement("pre");
      pre.textContent = "clamped: " + r.clamp_actions.join("\n");
      d.appendChild(pre);
    }
    for (const c of n.children) d.appendChild(agentNode(c, open));
    return d;
  }

  // ----- map interaction ---------------------------------------------------------------

  function toWorld(clientX, clientY) {
    const m = $("#world").getScreenCTM().inverse();
    const p = new DOMPoint(clientX, clientY).matrixTransform(m);
    return { x: Math.round(p.x * 100) / 100, y: Math.round(p.y * 100) / 100 };
  }

  function freshId(prefix) {
    let n = 1;
    for (const id of state.usedIds) {
      const m = id.match(new RegExp("^" + prefix + "(\\d+)$"));
      if (m) n = Math.max(n, Number(m[1]) + 1);
    }
    while (state.usedIds.has(prefix + n)) n++;
    state.usedIds.add(prefix + n);
    return prefix + n;
  }

  const HINTS = {
    "select": "click a target, SAM or drone to see its data",
    "add-sam": "click on the map to place a SAM (range from the toolbar)",
    "add-target": "click on the map to place a target (priority and type from the toolbar)",
    "move": "drag a target or a SAM to move it",
    "remove": "click a target or a SAM to remove it",
    "lose-drone": "click a drone to mark it lost",
  };

  function setTool(tool) {
    state.tool = tool;
    $("#map").dataset.tool = tool;
    $("#map-hint").textContent = HINTS[tool] || "";
  }

  function hit(target) {
    const t = target.closest && target.closest("[data-target-id],[data-sam-id],[data-drone-id].drone");
    if (!t) return null;
    if (t.dataset.targetId) return { kind: "target", id: t.dataset.targetId, el: t };
    if (t.dataset.samId) return { kind: "sam", id: t.dataset.samId, el: t };
    return { kind: "drone", id: t.dataset.droneId, el: t };
  }

  async function onMapClick(ev) {
    const p = toWorld(ev.clientX, ev.clientY);
    const h = hit(ev.target);
    try {
      switch (state.tool) {
        case "add-sam": {
          const range = Number($("#sam-range").value);
          const id = freshId("S");
          ghost(p, range);
          await edit({ op: "add_sam", id, pos: [p.x, p.y], range });
          toast(`SAM ${id} sent: (${p.x}, ${p.y}) range ${range}`, "info");
          break;
        }
        case "add-target": {
          const id = freshId("T");
          await edit({ op: "add_target", id, x: p.x, y: p.y,
                       priority: Number($("#target-priority").value), type: $("#target-type").value.trim() });
          toast(`target ${id} sent`, "info");
          break;
        }
        case "remove":
          if (h && h.kind === "target") { await edit({ op: "remove_target", id: h.id }); toast(`remove ${h.id} sent`, "info"); }
          else if (h && h.kind === "sam") { await edit({ op: "remove_sam", id: h.id }); toast(`remove ${h.id} sent`, "info"); }
          break;
        case "lose-drone":
          if (h && h.kind === "drone") { await edit({ op: "disable_drone", drone: h.id }); toast(`${label(h.id)} marked lost`, "info"); }
          break;
        case "select":
        default:
          if (h) showDetail(describe(h), null);
          break;
      }
    } catch (_) { /* the toast already says why */ }
  }

  function describe(h) {
    const scene = state.scene || {};
    if (h.kind === "target") return (scene.targets || []).find((t) => t.id === h.id);
    if (h.kind === "sam") return (scene.sams || []).find((s) => s.id === h.id);
    const d = { ...((scene.drones || {})[h.id] || {}) };
    delete d.flown; delete d.planned; delete d.frozen;
    return { id: h.id, ...d, telemetry: ((state.telemetry || {}).drones || {})[h.id] };
  }

  function ghost(p, range) {
    const g = $("#l-ghost");
    g.replaceChildren();
    g.setAttribute("class", "ghost");
    el("circle", { cx: p.x, cy: p.y, r: range, "vector-effect": "non-scaling-stroke" }, g);
    setTimeout(() => g.replaceChildren(), 1500);
  }

  function initMap() {
    const svg = $("#map");
    let down = null;
    svg.addEventListener("pointerdown", (ev) => {
      if (ev.button !== 0) return;
      const h = hit(ev.target);
      down = { x: ev.clientX, y: ev.clientY, h };
      if (state.tool === "move" && h && (h.kind === "target" || h.kind === "sam")) {
        state.dragging = { ...h, start: toWorld(ev.clientX, ev.clientY) };
        svg.setPointerCapture(ev.pointerId);
        ev.preventDefault();
      }
    });
    svg.addEventListener("pointermove", (ev) => {
      const d = state.dragging;
      if (!d) return;
      const p = toWorld(ev.clientX, ev.clientY);
      d.el.setAttribute("transform", `translate(${p.x},${p.y})`);
      d.to = p;
    });
    svg.addEventListener("pointerup", async (ev) => {
      const d = state.dragging;
      const start = down;
      down = null;
      if (d) {
        state.dragging = null;
        try { svg.releasePointerCapture(ev.pointerId); } catch (_) { /* released */ }
        if (d.to) {
          try {
            if (d.kind === "target") await edit({ op: "move_target", id: d.id, x: d.to.x, y: d.to.y });
            else await edit({ op: "move_sam", id: d.id, pos: [d.to.x, d.to.y] });
            toast(`move ${d.id} sent`, "info");
          } catch (_) { /* toast shown */ }
        }
        state.sceneDirty = true; schedule();
        return;
      }
      if (start && Math.hypot(ev.clientX - start.x, ev.clientY - start.y) < 6) onMapClick(ev);
    });
  }

  // ----- controls ----------------------------------------------------------------------

  function initControls() {
    for (const b of document.querySelectorAll("button[data-command]")) {
      b.addEventListener("click", async () => {
        const name = b.dataset.command;
        const words = ["CUT", "REPLAN"].includes(name) ? $("#cmd-text").value.trim() : "";
        try {
          await command(name, words || undefined);
          toast(`${name} sent`, "info");
          if (words) $("#cmd-text").value = "";
        } catch (_) { /* toast shown */ }
      });
    }
    for (const b of document.querySelectorAll("button[data-speed]")) {
      b.addEventListener("click", async () => {
        const v = b.dataset.speed;
        try {
          await api("POST", "/api/speed", { speed: v === "max" ? null : Number(v) });
          toast(`speed ${v === "max" ? "max" : v + "x"} sent`, "info");
        } catch (_) { /* toast shown */ }
      });
    }
    for (const r of document.querySelectorAll("input[name=tool]"))
      r.addEventListener("change", () => setTool(r.value));
    $("#truth").addEventListener("change", (ev) => {
      state.truth = ev.target.checked; state.fitKey = ""; state.sceneDirty = true; schedule();
    });
    $("#tl-verbose").addEventListener("change", (ev) => $("#timeline").classList.toggle("verbose", ev.target.checked));
    $("#timeline").addEventListener("click", (ev) => {
      const li = ev.target.closest("li");
      if (li) showDetail(li._event, li);
    });
    $("#ask-form").addEventListener("submit", async (ev) => {
      ev.preventDefault();
      const q = $("#ask-text").value.trim();
      if (!q) return;
      const out = $("#ask-answer");
      out.textContent = "…";
      try {
        const a = await api("POST", "/api/ask", { question: q });
        out.textContent = a.answer || "(no answer)";
        const numbers = Array.isArray(a.numbers) ? a.numbers
          : Object.entries(a.numbers || {}).map(([label, value]) => ({ label, value }));
        if (numbers.length) {
          const n = document.createElement("div"); n.className = "numbers";
          n.textContent = numbers.map((x) => {
            const v = typeof x.value === "number" ? Math.round(x.value * 10) / 10 : x.value;
            return `${x.label}: ${v}${x.unit ? " " + x.unit : ""}`;
          }).join(" · ");
          out.appendChild(n);
        }
      } catch (err) {
        out.textContent = "";
      }
    });
  }

  initToken();
  initControls();
  initMap();
  setTool("select");
  connect();
})();
