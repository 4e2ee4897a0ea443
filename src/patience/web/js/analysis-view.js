// A finished game's analysis in the replay viewer: a graph of the game (each position still winnable or not with
// every card known; the win chance with what the player could see, with its 95 % band, filling as the server
// computes it), the key moments (the verdict's, and the moves the win chance names inaccuracy, mistake or
// blunder, with their drop), and for a moment the move played, the better one and the better line to step
// through; luck against play in one line. The server analyses (worker processes, /api/analysis) and sends every
// position of the better line: this page knows no rule.

import { el, postForm } from "./arena.js";
import { playerName, t } from "./i18n.js";
import { $, request } from "./ui.js";

const SVG = "http://www.w3.org/2000/svg";
const W = 600;
const H = 120;
const PAD = 12;
const LEVEL = { won: 0.95, winnable: 0.8, unknown: 0.5, unwinnable: 0.12, given_up: 0.12 };
const POLL_MS = 1000;
const NO_ANSWER_MS = 5000; // no answer came: asked again this long after
const LABELS = ["inaccuracy", "mistake", "blunder"];
const pct = (x) => Math.round(x * 100);

function svg(tag, attrs = {}) {
  const node = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
  return node;
}

function texted(tag, key, params = null, props = {}) {
  const node = el(tag, props);
  node.dataset.t = key;
  if (params) node.dataset.p = JSON.stringify(params);
  node.textContent = t(key, params || {});
  return node;
}

/** The analysis panel of the replay viewer. ``view`` gives ``match`` (the replay's data), ``path`` (the API's
 * ``kind/id``), ``show(side, action)`` (the game at the position after ``action``), ``draw(side, frame)``
 * (a position of the better line on that side's board) and ``name(action)`` (an action's words). */
export function mountAnalysis(view) {
  const panel = $("#analysis");
  const sides = view.match.frames.length;
  let side = 0;
  let data = null;
  let moment = null;
  let lineAt = -1;
  let polling = null;
  let seen = ""; // the last answer read: a poll that brings nothing new redraws nothing
  let built = ""; // what the detail box holds (its moment, line and language): rebuilt only when that changes
  panel.hidden = false;
  document.body.classList.add("with-analysis"); // the page scrolls, the boards stay in sight (app.css)

  const picker = $("#analysis-sides");
  picker.replaceChildren();
  picker.hidden = sides < 2;
  view.match.players.forEach((p, s) => {
    const button = el("button", { type: "button", className: "btn solid", textContent: playerName(p.name) });
    button.dataset.side = String(s);
    button.addEventListener("click", () => {
      side = s;
      moment = null;
      lineAt = -1;
      render();
    });
    picker.append(button);
  });

  const say = (key, params = {}) => {
    const status = $("#analysis-status");
    status.dataset.t = key;
    status.dataset.p = JSON.stringify(params);
    const text = t(key, params);
    if (status.textContent !== text) status.textContent = text; // a live region: said again only when it changes
  };

  async function read() {
    const response = await request(`/api/analysis/${view.path}`, { credentials: "same-origin" });
    if (!response) { // no answer (the server or the network away): said, and asked again in a while
      say("offline.failed");
      clearTimeout(polling);
      polling = setTimeout(read, NO_ANSWER_MS);
      return;
    }
    if (response.status === 403) return say("analysis.secret");
    if (!response.ok) return say("analysis.error");
    const text = await response.text();
    if (text !== seen) { // the graph filled further, a stage ended: redraw, keeping the moment and the focus
      seen = text;
      data = JSON.parse(text);
      render();
    }
    const open = data.games.some((g) => g && (g.status === "queued" || g.status === "running"));
    clearTimeout(polling);
    if (open) polling = setTimeout(read, POLL_MS);
  }

  async function ask() {
    $("#analysis-ask").disabled = true;
    say("analysis.asking");
    const answer = await postForm(`/api/analysis/${view.path}`, {});
    $("#analysis-ask").disabled = false;
    if (answer.status === 429) return say("analysis.limit", { n: answer.limit });
    if (answer.status === 503) return say("analysis.busy");
    if (answer.status === 403) return say("analysis.secret");
    if (answer.status === 0) return say("offline.failed");
    if (answer.status >= 400) return say("analysis.error");
    data = answer;
    render();
    read();
  }

  /** Draw the panel again (a poll brought more, the side or the language changed): the chosen moment stays
   * chosen (found again in the new figures) and the focused control keeps the focus. */
  function render() {
    const active = document.activeElement;
    const focused = active && panel.contains(active) && active.dataset ? active.dataset.focus : null;
    draw();
    if (focused && !panel.contains(document.activeElement)) {
      panel.querySelector(`[data-focus="${focused}"]`)?.focus({ preventScroll: true });
    }
  }

  function draw() {
    for (const b of picker.children) b.setAttribute("aria-pressed", String(Number(b.dataset.side) === side));
    const game = data && data.games[side];
    $("#analysis-ask").hidden = Boolean(game);
    const graph = $("#analysis-graph");
    const list = $("#analysis-moments");
    $("#analysis-moments-title").hidden = !(game && game.verdict);
    if (!game) {
      if (data) say("analysis.intro");
      graph.replaceChildren();
      list.replaceChildren();
      $("#analysis-detail").hidden = true;
      return;
    }
    if (game.status === "failed") say("analysis.failed", { why: game.error || "" });
    else if (!game.verdict) say(`analysis.${game.status}`);
    else say("analysis.done", { s: game.cpu_s.toFixed(2) });
    $("#analysis-chance").textContent = chanceText(game);
    if (!game.verdict) { // not yet: nothing of another side's game stays on show
      graph.replaceChildren();
      list.replaceChildren();
      return;
    }
    if (moment) moment = sameMoment(game, moment) || moment;
    drawGraph(graph, game);
    drawMoments(list, game);
    detail();
  }

  /** ``m`` in the figures read since: the same action, and a verdict's kind, or any label of the win chance (a
   * label may change while the samples come in). */
  function sameMoment(game, m) {
    return allMoments(game).find((x) => momentKey(x) === momentKey(m));
  }

  const family = (kind) => (LABELS.includes(kind) ? "chance" : kind);
  const momentKey = (m) => `${family(m.kind)}:${m.action}`; // the same moment while its label may change

  function chanceText(game) {
    const chance = game.chance;
    if (!game.verdict) return "";
    if (!chance) return t("analysis.chance_waiting");
    if (chance.status === "not_available") return t("analysis.chance_off");
    if (chance.status === "filling") {
      return t("analysis.chance_filling", { n: chance.positions.filter((p) => p && p.chance !== null).length });
    }
    if (chance.deal_chance === null || chance.deal_chance === undefined) return t("analysis.chance_cut");
    const signed = (x) => (x > 0 ? "+" : "") + pct(x || 0);
    const result = t(chance.result ? "analysis.result_won" : "analysis.result_lost");
    // luck and play are summed only over a whole game's judged moves (null when the budget ran out)
    const line = chance.luck === null || chance.luck === undefined
      ? t("analysis.deal_only", { deal: pct(chance.deal_chance), result })
      : t("analysis.luck", { deal: pct(chance.deal_chance), result, luck: signed(chance.luck),
        play: signed(-(chance.lost_by_play || 0)) });
    return chance.complete === false ? `${line} ${t("analysis.chance_cut")}` : line;
  }

  /** The key moments: the verdict's, and each action the win chance names (inaccuracy, mistake, blunder). */
  function allMoments(game) {
    const out = [...game.verdict.moments];
    const c = game.chance;
    const frames = (c && c.better_frames) || {};
    for (const a of (c && c.actions) || []) {
      if (a.label && LABELS.includes(a.label)) {
        out.push({ action: a.action, kind: a.label, drop: a.drop, played: a.played, better: a.best_action,
          frames: frames[String(a.action)] || [], by: (c.better_by || {})[String(a.action)] || null });
      }
    }
    return out.sort((p, q) => p.action - q.action);
  }

  function chances(game) {
    const c = game.chance;
    if (!c || c.status === "not_available") return null;
    return c.positions || null; // [{chance, low, high, samples}], filling as the server computes them
  }

  function drawGraph(box, game) {
    const verdict = game.verdict;
    const n = Math.max(1, verdict.positions.length - 1);
    const x = (i) => PAD + (i * (W - 2 * PAD)) / n;
    const y = (v) => H - PAD - v * (H - 2 * PAD);
    const root = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "analysis-svg", role: "group" });
    root.setAttribute("aria-label", t("analysis.graph"));
    root.append(svg("title"));
    root.firstChild.textContent = t("analysis.graph");
    const half = (W - 2 * PAD) / n / 2;
    for (const run of verdict.runs) { // a band a run of equal verdicts, to halfway to the next position
      const left = x(run.from) - (run.from ? half : 0);
      const right = x(run.to) + (run.to < n ? half : 0);
      const band = svg("rect", { x: left, y: PAD, width: Math.max(2, right - left), height: H - 2 * PAD,
        class: `band ${run.verdict}` });
      band.setAttribute("aria-hidden", "true");
      root.append(band);
    }
    const points = verdict.positions.map((p, i) => `${x(i)},${y(LEVEL[p.verdict] ?? 0.5)}`).join(" ");
    root.append(svg("polyline", { points, class: "verdict-line", "aria-hidden": "true" }));
    const chance = chances(game);
    const runs = []; // the stretches of positions with a figure (a position not reached yet breaks the line)
    for (const [i, c] of (chance || []).entries()) {
      if (!c || c.chance === null || c.chance === undefined) continue;
      const run = runs[runs.length - 1];
      if (run && run[run.length - 1].i === i - 1) run.push({ i, c });
      else runs.push([{ i, c }]);
    }
    for (const run of runs) {
      const upper = run.map(({ i, c }) => `${x(i)},${y(c.high)}`);
      const lower = run.map(({ i, c }) => `${x(i)},${y(c.low)}`).reverse();
      root.append(svg("polygon", { points: [...upper, ...lower].join(" "), class: "chance-band", "aria-hidden": "true" }));
      root.append(svg("polyline", { points: run.map(({ i, c }) => `${x(i)},${y(c.chance)}`).join(" "),
        class: "chance-line", "aria-hidden": "true" }));
    }
    if (runs.length) root.dataset.chancePoints = String(runs.reduce((n, r) => n + r.length, 0));
    const level = (m) => {
      const before = chance && chance[m.action - 1];
      if (LABELS.includes(m.kind) && before && before.chance !== null) return before.chance;
      return LEVEL[verdict.positions[m.action].verdict] ?? 0.5;
    };
    for (const m of allMoments(game)) {
      const dot = svg("circle", { cx: x(m.action), cy: y(level(m)), r: 8,
        class: `moment ${m.kind}`, tabindex: 0, role: "button", "data-focus": `dot:${momentKey(m)}` });
      dot.setAttribute("aria-label", momentLabel(m));
      dot.addEventListener("click", () => choose(m));
      dot.addEventListener("keydown", (e) => {
        if (e.key === "Enter" || e.key === " ") {
          e.preventDefault();
          choose(m);
        }
      });
      dot.append(svg("title"));
      dot.lastChild.textContent = momentLabel(m);
      root.append(dot);
    }
    const start = svg("text", { x: PAD, y: H - 1, class: "axis" });
    start.textContent = t("analysis.axis_start");
    const end = svg("text", { x: W - PAD, y: H - 1, class: "axis end" });
    end.textContent = t("analysis.axis_end");
    root.append(start, end);
    box.replaceChildren(root);
  }

  function momentLabel(m) {
    const what = t(`analysis.kind.${m.kind}`, { from: m.action, to: m.to, drop: pct(m.drop || 0) });
    const parts = [t("analysis.moment", { i: m.action, what })];
    if (m.played) parts.push(t("analysis.played", { move: moveText(m.played) }));
    if (m.better) parts.push(t("analysis.better", { move: moveText(m.better) }));
    return parts.join(". ");
  }

  const moveText = (m) => view.name(m);

  function drawMoments(list, game) {
    const verdict = game.verdict;
    const items = allMoments(game).map((m) => {
      const button = el("button", { type: "button", className: "btn solid moment-button", textContent: momentLabel(m) });
      button.dataset.kind = m.kind;
      button.dataset.focus = `item:${momentKey(m)}`;
      button.setAttribute("aria-pressed", String(Boolean(moment && moment.action === m.action && moment.kind === m.kind)));
      button.addEventListener("click", () => choose(m));
      return el("li", {}, button);
    });
    if (!items.length) {
      const why = verdict.outcome === "won" ? "analysis.won_all" : verdict.never_winnable ? "analysis.never_why"
        : "analysis.alive_end";
      items.push(el("li", { className: "small", textContent: t("analysis.none", { why: t(why) }) }));
    }
    list.replaceChildren(...items);
  }

  function choose(m) {
    moment = allMoments(data.games[side]).find((x) => x.action === m.action && x.kind === m.kind) || m;
    lineAt = -1;
    built = "";
    view.show(side, Math.max(0, moment.action - (moment.kind === "never" ? 0 : 1)));
    render();
    $("#analysis-detail").focus();
  }

  /** The positions of a moment's better line (the first: the position the move was played in) and who chose
   * the moves after the better one: the solver (every card known: a winning line), the hint player, or none. */
  function lineOf(m) {
    if (m.kind === "losing") return { frames: data.games[side].verdict.better_frames || [], by: "solver" };
    return { frames: m.frames || [], by: m.by };
  }

  function detail() {
    const box = $("#analysis-detail");
    if (!moment) {
      box.hidden = true;
      built = "";
      return;
    }
    box.hidden = false;
    const { frames, by } = lineOf(moment);
    const key = [momentKey(moment), momentLabel(moment), frames.length, by, document.documentElement.lang].join("|");
    if (key !== built) { // built once for a moment: a step or a poll only updates it, so the focus stays put
      built = key;
      build(box, frames, by);
    }
    update(frames);
  }

  function build(box, frames, by) {
    const lines = [texted("p", `analysis.kind.${moment.kind}`, { from: moment.action, to: moment.to,
      drop: pct(moment.drop || 0) }, { className: "moment-what" })];
    if (moment.played) lines.push(el("p", { className: "moment-played", textContent: t("analysis.played", { move: moveText(moment.played) }) }));
    if (moment.better) lines.push(el("p", { className: "moment-better", textContent: t("analysis.better", { move: moveText(moment.better) }) }));
    if (frames.length > 1) {
      const n = frames.length - 1;
      lines.push(el("p", { className: "small line-by", textContent: t(`analysis.line_by.${n > 1 && by ? by : "move"}`, { n }) }));
      const button = (id, cls, key, shortcut, action) => {
        const b = el("button", { type: "button", className: `btn ${cls || "solid"}`, id, textContent: t(key) });
        b.dataset.focus = id;
        b.setAttribute("aria-keyshortcuts", shortcut);
        b.addEventListener("click", action);
        return b;
      };
      const prev = button("line-prev", "", "analysis.line_prev", "ArrowLeft", () => stepLine(lineAt - 1));
      const next = button("line-next", "primary", "analysis.line_start", "ArrowRight", () => stepLine(lineAt + 1));
      const back = button("line-back", "", "analysis.line_back", "Escape", backToGame);
      const where = el("span", { className: "small line-step", id: "line-step", role: "status" });
      where.setAttribute("aria-live", "polite");
      const keys = el("p", { className: "small line-keys", textContent: t("analysis.line_keys") });
      lines.push(el("div", { className: "line-controls" }, prev, next, back, where), keys);
    }
    box.replaceChildren(...lines);
  }

  /** The line's controls for the step shown (the box is not built again: the focused button keeps the focus). */
  function update(frames) {
    const prev = $("#line-prev");
    if (!prev || frames.length < 2) return;
    const next = $("#line-next");
    prev.disabled = lineAt <= 0;
    next.disabled = lineAt >= frames.length - 1;
    next.textContent = t(lineAt < 0 ? "analysis.line_start" : "analysis.line_next");
    $("#line-back").hidden = lineAt < 0;
    let where = lineAt < 0 ? "" : t("analysis.line_step", { i: lineAt, n: frames.length - 1 });
    if (lineAt >= 0 && frames[lineAt].m) where += ` · ${moveText(frames[lineAt].m)}`;
    const step = $("#line-step");
    if (step.textContent !== where) step.textContent = where;
  }

  function stepLine(k) {
    if (!moment) return;
    const { frames } = lineOf(moment);
    if (frames.length < 2) return;
    const was = document.activeElement;
    lineAt = Math.max(0, Math.min(k, frames.length - 1));
    view.draw(side, frames[lineAt]);
    update(frames);
    if (was && was.disabled) { // at an end of the line: the focus goes to the button that still steps
      document.querySelector("#line-next:not([disabled]), #line-prev:not([disabled]), #line-back")?.focus();
    }
  }

  function backToGame() {
    if (!moment) return;
    lineAt = -1;
    view.show(side, Math.max(0, moment.action - 1));
    const { frames } = lineOf(moment);
    update(frames);
    $("#line-next")?.focus();
  }

  // the better line by keyboard, wherever the focus is in the moment's box: arrows step, Escape goes back
  $("#analysis-detail").addEventListener("keydown", (e) => {
    if (!moment || e.altKey || e.ctrlKey || e.metaKey || e.shiftKey) return;
    if (e.key === "ArrowRight") stepLine(lineAt + 1);
    else if (e.key === "ArrowLeft" && lineAt > 0) stepLine(lineAt - 1);
    else if (e.key === "Escape" && lineAt >= 0) backToGame();
    else return;
    e.preventDefault();
  });

  $("#analysis-ask").onclick = ask;
  read();
  return { render: () => render() };
}
