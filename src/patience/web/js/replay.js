// The replay viewer: both players' games of a finished match side by side, step by step on one
// timeline. The server plays the records through the rules engine and sends each position; this
// page only draws them. While a match goes on, it shows who plays and the commitment, never the seed.
// With ``?daily=GAME/DAY/ID`` it shows one finished game of a deal of the day that is over, alone; with ``?game=ID``
// one's own solo game that has ended. Below the games, their analysis (analysis-view.js), once the deal is shown.

import { mountAnalysis } from "./analysis-view.js";
import { Board } from "./board.js";
import { commitmentText, el, formatName, gameName, noAnswer, openPage, sha256 } from "./arena.js";
import { moveName, onLang, playerName, t } from "./i18n.js";
import { reportBox } from "./report.js";
import { $, applyText, formatTime, points, request } from "./ui.js";

const params = new URLSearchParams(location.search);
const noop = { move() {}, stock() {}, select() {}, announce() {} };
let match = null;
let boards = [];
let timeline = []; // [t, side, frame index] in time order; step 0 is the deal
let step = 0;
let playing = null;
let analysis = null;

function buildTimeline() {
  const events = [];
  match.frames.forEach((frames, side) => frames.forEach((f, i) => i && events.push([f.t, side, i])));
  events.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  timeline = [[0, null, 0], ...events];
}

function frameAt(side, upto) {
  let index = 0;
  for (let k = 1; k <= upto; k++) if (timeline[k][1] === side) index = timeline[k][2];
  return index;
}

/** An action of a record for people: a move, a turn of the stock, an undo, a give-up. */
function actionName(m) {
  return m === "draw" || m === "redeal" ? t(m === "draw" ? "stock_draw" : "stock_redeal")
    : m === "giveup" ? t("give_up") : m === "undo" ? t("undo") : moveName(m, match.game);
}

/** The replay at the position of ``side`` after its action ``action`` (0: the deal). */
function showAction(side, action) {
  if (action === 0) return show(0);
  const k = timeline.findIndex((e) => e[1] === side && e[2] === action);
  if (k >= 0) show(k);
}

/** A position that was not played (the better line) on ``side``'s board. */
function drawFrame(side, frame) {
  boards[side].update({ piles: frame.piles, counters: frame.counters, stock_action: null });
  const head = document.querySelector(`.side[data-side="${side}"]`);
  head.querySelector(".side-score").textContent = `${t("score")} ${points(frame.score)}`;
  head.querySelector(".side-step").textContent = `${t("analysis.line")}${frame.m ? ` · ${actionName(frame.m)}` : ""}`;
}

function show(k) {
  step = Math.max(0, Math.min(k, timeline.length - 1));
  for (const side of match.frames.keys()) {
    const index = frameAt(side, step);
    const frame = match.frames[side][index];
    boards[side].update({ piles: frame.piles, counters: frame.counters, stock_action: null });
    const head = document.querySelector(`.side[data-side="${side}"]`);
    head.querySelector(".side-score").textContent = `${t("score")} ${points(frame.score)}`;
    const ended = frame.outcome ? ` · ${t(`outcome.${frame.outcome}`)}` : "";
    const what = frame.m == null ? t("replay.deal") : frame.m === "end" ? `${t("replay.end")}${ended}`
      : frame.m === "match_end" ? t("replay.match_end") // a duel's pool, added when the match ended
        : actionName(frame.m);
    head.querySelector(".side-step").textContent = `${formatTime(frame.t)} · ${what}${frame.ok ? "" : " ✗"}`;
    head.dataset.current = String(timeline[step][1] === side);
  }
  $("#scrub").value = String(step);
  $("#step").textContent = t("replay.step", { i: step, n: timeline.length - 1 });
}

function toggle() {
  if (playing) {
    clearInterval(playing);
    playing = null;
  } else {
    if (step >= timeline.length - 1) show(0);
    playing = setInterval(() => {
      if (step >= timeline.length - 1) toggle();
      else show(step + 1);
    }, 450);
  }
  $("#playpause").textContent = t(playing ? "replay.pause" : "replay.play");
}

async function render() {
  applyText();
  if (!match) return;
  $("#variant-name").textContent = match.daily ? `${gameName(match.game)} · ${t("daily.title")} ${match.daily}`
    : match.solo ? gameName(match.game) : formatName(`${match.game}/${match.variant}/${match.limit_s}`);
  match.players.forEach((p, side) => {
    const link = document.querySelector(`.side[data-side="${side}"] .side-name`);
    link.textContent = playerName(p.name);
    link.href = `/profile?u=${encodeURIComponent(p.id)}`;
    link.hidden = !p.id;
  });
  if (match.state !== "over") {
    $("#notice").textContent = `${t("replay.live")} ${t("duel.commitment")}: ${match.commitment}`;
    $("#notice").hidden = false;
    $("#sides").hidden = true;
    document.querySelector(".replay-controls").hidden = true;
    return;
  }
  if (analysis) analysis.render();
  const r = match.record;
  if (match.solo) {
    $("#verify").hidden = true;
    show(step);
    return;
  }
  const digest = await sha256(commitmentText(match.game, match.options, r.seed, r.nonce));
  const ok = digest === match.commitment;
  $("#verify").textContent = match.daily ? `${t(ok ? "daily.verified" : "daily.not_verified")}: ${r.seed}`
    : ok ? t("duel.verified", { seed: r.seed }) : t("duel.not_verified");
  $("#verify").dataset.ok = String(digest === match.commitment);
  show(step);
}

async function main() {
  const user = await openPage();
  onLang(render);
  const daily = (params.get("daily") || "").split("/");
  const solo = params.get("game");
  const response = await request(daily.length === 3
    ? `/api/daily/${encodeURIComponent(daily[0])}/${encodeURIComponent(daily[1])}/replay/${encodeURIComponent(daily[2])}`
    : solo ? `/api/games/${encodeURIComponent(solo)}/replay`
      : `/api/matches/${encodeURIComponent(params.get("id") || "")}`);
  const found = response && response.ok ? await response.json().catch(() => null) : null;
  if (!response || response.status >= 500) {
    applyText();
    noAnswer("offline.failed"); // no answer (or a proxy's for a server away): not "no such match"
    return;
  }
  if (!found) {
    // no such match: say so, with the way to the others, instead of an empty table
    $("#sides").hidden = true;
    document.querySelector(".replay-controls").hidden = true;
    const notice = $("#notice");
    notice.classList.add("lost");
    notice.setAttribute("role", "alert");
    notice.replaceChildren(
      el("span", { textContent: "" }), el("a", { className: "btn primary", href: "/matches" }));
    notice.firstChild.dataset.t = "lost.match";
    notice.firstChild.dataset.p = JSON.stringify({ id: (params.get("id") || "").slice(0, 40) });
    notice.lastChild.dataset.t = "lost.matches";
    notice.hidden = false;
    applyText();
    return;
  }
  match = found;
  if (match.state === "over" && user && !match.solo) { // after the match: a signed-in player may report the others in it
    const others = match.players.filter((p) => p.id !== user.id);
    $("#report").append(...others.map((p) => reportBox(p.id, playerName(p.name))));
    $("#report").hidden = !others.length;
  }
  if (match.state === "over") {
    document.querySelector('.side[data-side="1"]').hidden = match.frames.length < 2; // a day's game is alone
    boards = match.frames.map((_, side) => {
      const board = new Board($(`#board${side}`), noop);
      board.setGame(match.game, match.options);
      return board;
    });
    buildTimeline();
    $("#scrub").max = String(timeline.length - 1);
    step = timeline.length - 1; // the end first: the result, then step back through it
    const path = match.daily ? `daily/${encodeURIComponent(match.id)}` : match.solo
      ? `game/${encodeURIComponent(match.id)}` : `match/${encodeURIComponent(match.id)}`;
    analysis = mountAnalysis({ match, path, show: showAction, draw: drawFrame, name: actionName });
  }
  $("#first").addEventListener("click", () => show(0));
  $("#prev").addEventListener("click", () => show(step - 1));
  $("#next").addEventListener("click", () => show(step + 1));
  $("#last").addEventListener("click", () => show(timeline.length - 1));
  $("#playpause").addEventListener("click", toggle);
  $("#scrub").addEventListener("input", (e) => show(Number(e.target.value)));
  document.addEventListener("keydown", (e) => {
    if (e.target.closest && e.target.closest("#analysis")) return; // the analysis's own buttons
    if (e.key === "ArrowLeft") show(step - 1);
    else if (e.key === "ArrowRight") show(step + 1);
  });
  render();
}

main();
