// The game page: connects to the server, shows the table, the score, the clock, the ledger,
// and the end of the game; every action is an intent the server answers.

import { fetchGames, formatName } from "./arena.js";
import { Board } from "./board.js";
import { cardDisplay } from "./cards.js";
import { cardName, lang, moveName, onLang, pileName, playerName, refusal, rulesOf, say, setLang, t } from "./i18n.js";
import { Instant } from "./instant.js";
import { Net } from "./net.js";
import { settingsSection } from "./settings.js";
import { lastSeconds, moveSound, sound } from "./sound.js";
import {
  $, applyText, autoMove, cardBack, confirmDialog, fetchStats, formatTime, fourColour, getJSON, languageSwitch, points,
  renderStats, showUndo, signed, toast, winnableOnly,
} from "./ui.js";

const params = new URLSearchParams(location.search);
const RESERVED = new Set(["id", "game", "seed", "variant", "lang", "now"]);
// the address of a deal played once (the deal of the day, "day:DATE"; Play now, "now:MATCH"): never a random game
const PLAYED_ONCE = /^(day:\d{4}-\d{2}-\d{2}|now:.+)$/.test(params.get("seed") || "");

const view = {
  game: null, // the last "game" message
  status: null,
  statusAt: 0, // performance.now() when status arrived
  ledger: [],
  endShown: false,
  lastTicks: {}, // the clock's last ten seconds: the one last ticked
  apart: null, // a game of Play now: what the server said of its match ({role, format, opponent, commitment})
  practice: null, // the id of the game on the table when it is a practice deal (docs/fairplay.md), once the server said
  practiceAsked: null, // the id of the game it was asked for
};

// -- starting ----------------------------------------------------------------------------------

function dealFromParams() {
  const deal = { game: params.get("game") || "reloaded" };
  if (params.get("variant")) deal.variant = params.get("variant");
  if (/^\d{1,19}$/.test(params.get("seed") || "")) deal.seed = params.get("seed");
  else if (winnableOnly()) deal.winnable = true;
  const options = {};
  for (const [key, value] of params) if (!RESERVED.has(key)) options[key] = value;
  if (Object.keys(options).length) deal.options = options;
  return deal;
}

const board = new Board($("#board"), {
  // how: how the player made it (fair play's evidence, docs/fairplay.md)
  // a move the server listed as legal is drawn at once (instant.js), then sent like any other
  move: (src, dst, n, how) => instant.move(src, dst, n,
    () => net.send("move", withAuto({ ...(n == null ? { src, dst } : { src, dst, n }), ...how }))),
  stock: (how) => instant.stock(() => net.send("stock", withAuto({ ...how }))),
  select: (pile, n) => view.game && view.game.assist && net.send("targets", { src: pile, n }),
  announce: (text) => announce(text),
});

/** Auto-move is the player's setting; the server does the moves (the page knows no rule). */
function withAuto(intent) {
  return autoMove() ? { ...intent, auto: true } : intent;
}

const net = new Net({
  game: onGame,
  ev: onEvent,
  rej: onReject,
  hint: onHint,
  targets: onTargets,
  err: onError,
  status: (online) => {
    $("#banner").hidden = online;
    if (!online) instant.offline(); // a move drawn and not answered goes back
  },
});
const instant = new Instant(board, net);

// -- messages from the server ------------------------------------------------------------------

function onGame(d) {
  const same = view.game && view.game.id === d.id;
  if (!same) instant.reset();
  instant.heard(d);
  view.game = d;
  view.ledger = d.ledger.slice();
  if (!same) {
    board.setGame(d.game, d.options);
    view.endShown = false;
    closeDialogs();
    sound("deal");
  }
  board.update(d.table);
  setStatus(d.status);
  showNames();
  const url = new URL(shareUrl());
  url.searchParams.set("id", d.id);
  history.replaceState(null, "", url.pathname + url.search);
  $("#seed-input").value = d.seed;
  $("#share-url").value = shareUrl();
  if (d.summary && !view.endShown) showEnd(d.summary);
}

function onEvent(d, mine) {
  const before = instant.table || board.table; // the server's last table, not a move drawn ahead of it
  instant.heard(d, mine);
  if (d.table) board.update(d.table);
  else if (!d.ok) board.snapBack();
  view.ledger.push(...d.ledger);
  setStatus(d.status);
  if (!d.ok && d.reason) {
    const points = d.ledger.reduce((sum, line) => sum + line.applied, 0);
    const text = say(d.why, d.reason, view.game.game);
    toast(points ? `${text} (${signed(points)})` : text, "bad");
    flashScore(points);
    announce(text);
  } else if (d.kind === "move" && d.move && mine) {
    const shown = turnedUp(before, d.table);
    announce(shown.length ? `${describeMove(d.move)}. ${t("turned_up", { cards: shown.map(cardName).join(", ") })}`
      : describeMove(d.move));
  } else if (d.kind === "undo" && mine) {
    announce(t("undo"));
  }
  if (d.ok && d.kind === "move" && d.move) moveSound(d.move);
  else if (!d.ok && d.reason) sound("refusal");
  if ($("#ledger").open) renderLedger();
  if (d.summary) board.clearSelection();
  if (d.summary && !view.endShown && d.summary.outcome === "won") sound("win");
  if (d.summary && !view.endShown) {
    view.endShown = true;
    const party = d.summary.outcome === "won" ? board.celebrate() : 0;
    setTimeout(() => showEnd(d.summary), Math.max(500, party + 200));
  }
}

function onReject(d) {
  instant.refused(d.ack);
  board.snapBack();
  sound("refusal");
  const text = refusal(d, view.game && view.game.game, instant.cardOf(d.ack));
  toast(text, "bad");
  announce(text);
}

let hintTimer = null;

function onHint(d) {
  clearTimeout(hintTimer);
  if (!d.move) {
    toast(t("no_hint"));
    return;
  }
  board.clearSelection();
  board.mark("hint", [d.dst], { pile: d.src, n: d.n });
  toast(t("hint_is", { move: describeHint(d) }));
  hintTimer = setTimeout(() => board.clearMarks("hint"), 3500);
}

function onTargets(d) {
  const sel = board.selection;
  const dragging = board.gesture && board.gesture.dragging;
  if ((sel && sel.pile === d.src) || (dragging && board.gesture.pile === d.src)) board.mark("target", d.dsts);
}

function onError(d) {
  instant.refused(d.ack);
  if (d.code === "no_such_game" || d.code === "cannot_restore") {
    if (PLAYED_ONCE) showPlayedOnce(params.get("game") || "", params.get("seed"));
    else net.newGame(dealFromParams());
    return;
  }
  if (d.code === "unknown_game" && !view.game) {
    showLost(params.get("game") || "");
    return;
  }
  if (d.code === "bad_options" && !view.game) {
    showLost(params.get("game") || "", "lost.options"); // the engine's words are English: the page's own
    return;
  }
  if (d.code === "unknown_game" || d.code === "bad_options" || d.code === "no_winnable") {
    // nothing changed: the game on the table (if any) goes on
    toast(say(d.why, d.msg), "bad");
    if (!view.game) setTimeout(() => (location.href = "/"), 2500);
    return;
  }
  if (d.code === "stale_ack") {
    // an intent older than one already answered (sent again after the game moved): the newer answer holds
    board.snapBack();
    return;
  }
  if (d.code === "too_many_games") {
    toast(t("too_many_games"), "bad");
    return;
  }
  if (d.code === "moved") {
    // another window (perhaps on another server process) took the game: this page no longer shows it
    toast(t("game_moved"), "bad");
    return;
  }
  board.snapBack();
  if (d.code === "game_over") toast(t("why.game_over"), "bad");
  else if (d.code === "not_here" && isPlayNow()) toast(t("playnow.hints_off"), "bad");
  else if (d.code === "not_here" && isDaily()) toast(t("hints_off"), "bad");
  else toast(lang() === "en" && d.msg ? d.msg : t("server_error"), "bad"); // the server speaks English
}

/** The game on the table is an attempt at the deal of the day. */
function isDaily() {
  return !!(view.game && String(view.game.seed).startsWith("day:"));
}

/** The game on the table is one side of a match of Play now (played apart: the seed is ``now:MATCH``). */
function isPlayNow() {
  return !!(view.game && String(view.game.seed).startsWith("now:"));
}

/** A deal played once, as the server keeps it: the deal of the day or a game of Play now. */
function isFixed() {
  return isDaily() || isPlayNow();
}

// -- Play now: who the game is against, the commitment, the way to one's games --------------------

/** What the Play now button's answer said (kept for this game by the page that pressed it), else the
 * player's list of games: the match of this game. */
async function loadApart(gameId, matchId) {
  let found = null;
  try {
    found = JSON.parse(sessionStorage.getItem(`patience.playnow.${gameId}`) || "null");
  } catch {
    found = null;
  }
  if (!found && matchId) {
    try {
      const list = await fetch("/api/playnow", { cache: "no-store" }).then((r) => r.json());
      found = (list.games || []).find((g) => g.id === matchId) || null;
    } catch {
      found = null;
    }
  }
  await fetchGames().catch(() => null);
  if (found) {
    view.apart = found;
    renderApart();
  }
}

function renderApart() {
  const a = view.apart;
  const bar = $("#playnow-bar");
  if (!a) return;
  bar.hidden = false;
  const format = formatName(a.format);
  const them = a.opponent;
  let line;
  if (a.role === "challenger" && them && them.rating != null) {
    line = t("playnow.line_challenger", { format, name: playerName(them.name), rating: them.rating });
  } else if (a.role === "challenger" && them) {
    line = t("playnow.line_against", { format, name: playerName(them.name) });
  } else {
    line = t("playnow.line_host", { format });
  }
  $("#playnow-line").textContent = line;
  const commit = $("#playnow-commit");
  commit.textContent = `${String(a.commitment).slice(0, 12)}…`;
  commit.title = a.commitment;
  $("#playnow-games").hidden = !(view.status && view.status.outcome);
}

/** Whether the deal of the day on the table is the player's practice deal: the day's board says of the player's
 * attempt (begun) while the day lasts. Said in the header once known; no answer: the day's label stays. */
async function askPractice(g) {
  const day = g.seed.slice(4);
  const board = await getJSON(`/api/daily/${encodeURIComponent(g.game)}?day=${encodeURIComponent(day)}`,
    { cache: "no-store" });
  if (!board || !board.practice || !board.practice.begun || !view.game || view.game.id !== g.id) return;
  view.practice = g.id;
  showNames();
}

/** An address naming no game: said in the page's language over the empty table, with the way back. */
function showLost(game, key = "lost.game", params = { game: game.slice(0, 40) }, link = ["/", "lost.home"]) {
  const box = document.createElement("section");
  box.className = "panel lost";
  box.setAttribute("role", "alert");
  const text = Object.assign(document.createElement("p"), { textContent: "" });
  text.dataset.t = key;
  text.dataset.p = JSON.stringify(params);
  const back = Object.assign(document.createElement("a"), { className: "btn primary", href: link[0] });
  back.dataset.t = link[1];
  box.append(text, back);
  $("#board").append(box);
  $(".figures").hidden = true; // no game: no score, clock or actions
  $(".toolbar").hidden = true;
  $("#game-name").dataset.t = "lost.title";
  applyText();
}

/** A deal played once (the deal of the day, a game of Play now) asked for by its address (its seed), with no
 * game of it to join: never another game in its place, but where it stands and the way to its page. */
async function showPlayedOnce(game, seed) {
  if (seed.startsWith("now:")) {
    showLost(game, "once.now", {}, ["/playnow", "once.to_now"]);
    $("#game-name").dataset.t = "playnow.button";
    applyText();
    document.title = `${t("playnow.button")} · Patience Arena`;
    return;
  }
  const day = seed.slice(4, 14);
  let key = "once.today";
  try {
    const board = await fetch(`/api/daily/${encodeURIComponent(game)}?day=${encodeURIComponent(day)}`,
      { cache: "no-store" }).then((r) => (r.ok ? r.json() : null));
    const mine = board && board.mine != null ? board.entries.find((row) => row.rank === board.mine) : null;
    if (board && board.over) key = "once.past";
    else if (mine) key = mine.outcome ? "once.done" : "once.going";
  } catch {
    // the general words then
  }
  const query = new URLSearchParams({ game, day });
  showLost(game, key, { day }, [`/daily?${query}`, "once.to_day"]);
  $("#game-name").dataset.t = "daily.title";
  applyText();
  document.title = `${t("daily.title")} · Patience Arena`;
}

// -- the header: score, clock, pool, undo ------------------------------------------------------

function setStatus(status) {
  view.status = status;
  view.statusAt = performance.now();
  $("#score").textContent = points(status.score);
  showUndo(status);
  $("#hint").disabled = !!status.outcome;
  // the deal of the day and Play now: no hints, and no new game while the one game goes on (give up in the menu)
  const fixed = isFixed();
  $("#hint").hidden = fixed;
  $("#new").hidden = fixed && !status.outcome;
  $("#m-new").hidden = fixed && !status.outcome;
  if (view.apart) $("#playnow-games").hidden = !status.outcome;
  $("#pool-box").hidden = !status.pool || !!status.outcome; // once over, what was left is in the score
  tickClock();
}

function playedMs() {
  const s = view.status;
  if (!s) return 0;
  return s.clock.ms + (s.clock.running ? performance.now() - view.statusAt : 0);
}

function tickClock() {
  const s = view.status;
  if (!s) return;
  const ms = playedMs();
  const limit = s.clock.limit;
  const clock = $("#clock");
  if (limit) {
    const left = Math.max(0, limit - ms);
    $("#clock-label").textContent = t("time_left");
    clock.textContent = formatTime(Math.ceil(left / 1000) * 1000);
    clock.classList.toggle("urgent", s.clock.running && left < 30000);
    lastSeconds(view.lastTicks, left, s.clock.running);
  } else {
    $("#clock-label").textContent = t("time");
    clock.textContent = formatTime(ms);
  }
  if (s.pool) {
    const p = s.pool;
    let value = p.value;
    if (p.zero_ms && s.clock.running) value = Math.max(0, Math.floor((p.value * (p.zero_ms - ms)) / (p.zero_ms - p.ms)));
    $("#pool").textContent = String(value);
  }
}
setInterval(tickClock, 250);

function flashScore(points) {
  if (!points) return;
  const el = $("#score-btn");
  el.classList.remove("flash-bad", "flash-good");
  void el.offsetWidth;
  el.classList.add(points < 0 ? "flash-bad" : "flash-good");
}

function showNames() {
  const g = view.game;
  if (!g) return;
  const name = g.names[lang()] || g.names.en;
  const own = /\(([^)]+)\)/.exec(name); // "The Fan (Der Fächer)": a narrow screen shows the game's own name
  $("#game-name").replaceChildren(
    Object.assign(document.createElement("span"), { className: "long", textContent: name }),
    Object.assign(document.createElement("span"), { className: "short", textContent: own ? own[1] : name }),
  );
  const variants = t(`variants.${g.game}`);
  const variant = g.variant && typeof variants === "object" ? variants[g.variant] : "";
  // the deal of the day shows its day, never its key, and is played once: no "same deal" nor another number
  const daily = g.seed.startsWith("day:");
  const now = g.seed.startsWith("now:"); // Play now: its match, never the key
  // a practice deal (an account the day's board does not take) has the day's label too, but is not the day's deal
  const dayName = view.practice === g.id ? t("daily.practice.title") : t("daily.title");
  const which = daily ? `${dayName} ${g.seed.slice(4)}` : now ? t("playnow.button") : `#${g.seed}`;
  // the number whole, the variant's name cut short if the header has no room for both
  const part = (className, textContent) => Object.assign(document.createElement("span"), { className, textContent });
  $("#variant-name").replaceChildren(...(variant ? [part("what", variant), part("sep", " · ")] : []), part("which", which));
  for (const id of ["#m-restart", "#seed-form", "#same"]) $(id).hidden = daily || now;
  $("#share-url").parentElement.hidden = now;
  $("#again").hidden = now;
  $("#end-playnow").hidden = !now;
  if (now && !view.apart && !view.apartAsked) {
    view.apartAsked = true;
    loadApart(g.id, g.seed.slice(4));
  }
  if (daily && view.practiceAsked !== g.id) {
    view.practiceAsked = g.id;
    askPractice(g);
  }
  document.title = `${g.names[lang()] || g.names.en} · Patience Arena`;
}

// -- words for what happened -------------------------------------------------------------------

function describeMove(move) {
  const game = view.game.game;
  if (move === "draw" || move === "redeal") return t(move === "draw" ? "stock_draw" : "stock_redeal");
  const [, src, dst] = /^([a-z]+\d*)>([a-z]+\d*)/.exec(move) || [];
  const cards = board.table.piles[dst] || [];
  const top = cards.at(-1);
  return top ? t("moved", { card: cardName(top), pile: pileName(dst, game) }) : moveName(move, game) || src;
}

/** The cards face up now that no one saw before the move: turned over on a pile, or laid from the stock. */
function turnedUp(before, after) {
  if (!before || !after) return [];
  const seen = new Set(Object.values(before.piles).flat().filter(Boolean));
  return Object.values(after.piles).flat().filter((c) => c && !seen.has(c));
}

function describeHint(h) {
  const game = view.game.game;
  if (h.move === "draw") return t("stock_draw");
  if (h.move === "redeal") return t("stock_redeal");
  const cards = board.table.piles[h.src] || [];
  const card = cards[cards.length - h.n];
  return card ? `${cardDisplay(card)} → ${pileName(h.dst, game)}` : moveName(h.move, game);
}

function announce(text) {
  const live = $("#live");
  live.textContent = "";
  setTimeout(() => (live.textContent = text), 30);
}

// -- the ledger --------------------------------------------------------------------------------

function renderLedger() {
  const body = $("#ledger-lines");
  body.replaceChildren();
  const game = view.game ? view.game.game : "";
  if (!view.ledger.length) {
    const row = body.insertRow();
    const cell = row.insertCell();
    cell.colSpan = 4;
    cell.textContent = t("ledger_empty");
  }
  for (const line of view.ledger.slice().reverse()) {
    const row = body.insertRow();
    row.insertCell().textContent = formatTime(line.t);
    row.insertCell().textContent = say(line.why, line.reason, game);
    const change = row.insertCell();
    // A change cut short by the score's floor shows both: what the table charged and what it did.
    change.textContent = line.applied === line.points
      ? signed(line.applied) : `${signed(line.points)} → ${signed(line.applied)}`;
    change.className = line.applied < 0 ? "neg" : line.applied > 0 ? "pos" : line.points < 0 ? "neg" : "";
    row.insertCell().textContent = points(line.total);
  }
  $("#ledger-total").textContent = view.status ? points(view.status.score) : "0";
  const notes = [t("clock_note")];
  const cut = view.ledger.find((line) => line.applied !== line.points);
  if (cut) notes.push(t("floor_note", { from: signed(cut.points), to: signed(cut.applied) }));
  $("#ledger-notes").replaceChildren(...notes.map((text) => Object.assign(document.createElement("p"), { textContent: text })));
}

// -- the end -----------------------------------------------------------------------------------

async function showEnd(summary) {
  view.endShown = true;
  const dialog = $("#end");
  $("#end-title").textContent = t(`outcome.${summary.outcome}`);
  dialog.dataset.outcome = summary.outcome;
  $("#end-score").textContent = points(summary.score);
  $("#end-facts").textContent = `${t("moves")} ${summary.moves} · ${t("time")} ${formatTime(summary.ms)}`;
  const body = $("#end-breakdown");
  body.replaceChildren();
  for (const row of summary.breakdown) {
    if (!row.points && row.kind !== "illegal") continue;
    const tr = body.insertRow();
    tr.insertCell().textContent = t(`kind.${row.kind}`);
    tr.insertCell().textContent = row.count > 1 ? `× ${row.count}` : "";
    const cell = tr.insertCell();
    cell.textContent = signed(row.points);
    cell.className = row.points < 0 ? "neg" : "pos";
  }
  if (!body.rows.length) body.insertRow().insertCell().textContent = t("ledger_empty");
  const names = view.game.names;
  const variant = view.game.variant || "custom";
  const variantName = t(`variants.${view.game.game}`)[variant] || t("custom_options");
  $("#end-stats-title").textContent = t("your_stats", { game: `${names[lang()] || names.en} · ${variantName}` });
  $("#end-stats").textContent = "…";
  // one's own solo game: its replay and analysis (a day's or Play now's shows once its deal is no longer secret)
  $("#end-replay").hidden = isFixed();
  $("#end-replay").href = `/match?game=${encodeURIComponent(view.game.id)}`;
  if (!dialog.open) dialog.showModal();
  (isPlayNow() ? $("#end-playnow") : $("#again")).focus();
  const data = await fetchStats();
  renderStats($("#end-stats"), data && data.stats[view.game.game], variant);
}

function closeDialogs() {
  for (const d of document.querySelectorAll("dialog[open]")) d.close();
}

// -- actions -----------------------------------------------------------------------------------

function inProgress() {
  const s = view.status;
  return s && !s.outcome && s.moves > 0;
}

async function startNew(seed) {
  if (inProgress() && !(await confirmDialog(t("confirm_new")))) return;
  closeDialogs();
  const g = view.game;
  const deal = { game: g.game };
  if (Object.keys(g.changed).length) deal.options = g.changed;
  if (seed) deal.seed = String(seed);
  else if (winnableOnly()) deal.winnable = true;
  net.newGame(deal);
}

function shareUrl() {
  const g = view.game;
  const url = new URL("/play", location.origin);
  url.searchParams.set("game", g.game);
  url.searchParams.set("seed", g.seed);
  for (const [key, value] of Object.entries(g.changed)) url.searchParams.set(key, String(value));
  return url.toString();
}

async function copyShare() {
  const text = shareUrl();
  try {
    await navigator.clipboard.writeText(text);
  } catch {
    const input = $("#share-url");
    input.select();
    document.execCommand("copy");
  }
  toast(t("copied"));
}

function bindControls() {
  $("#undo").addEventListener("click", () => net.send("undo"));
  $("#hint").addEventListener("click", () => !isFixed() && net.send("hint"));
  $("#new").addEventListener("click", () => startNew(null));
  $("#menu-btn").addEventListener("click", () => $("#menu").showModal());
  $("#score-btn").addEventListener("click", openLedger);
  $("#ledger-btn").addEventListener("click", openLedger);
  $("#rules-btn").addEventListener("click", openRules);
  $("#m-ledger").addEventListener("click", () => {
    $("#menu").close();
    openLedger();
  });
  $("#m-new").addEventListener("click", () => startNew(null));
  $("#m-restart").addEventListener("click", () => view.game && startNew(view.game.seed));
  $("#m-giveup").addEventListener("click", async () => {
    $("#menu").close();
    if (view.status && !view.status.outcome && (await confirmDialog(t("confirm_giveup")))) net.send("giveup");
  });
  $("#seed-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const value = $("#seed-input").value.trim();
    if (/^\d{1,19}$/.test(value)) startNew(value);
  });
  $("#share-copy").addEventListener("click", copyShare);
  const back = cardBack();
  for (const input of document.querySelectorAll("input[name=back]")) {
    input.checked = input.value === back;
    input.addEventListener("change", () => cardBack(input.value));
  }
  $("#four").checked = fourColour();
  $("#four").addEventListener("change", (e) => fourColour(e.target.checked));
  $("#auto").checked = autoMove();
  $("#auto").addEventListener("change", (e) => autoMove(e.target.checked));
  $("#winnable").checked = winnableOnly();
  $("#winnable").addEventListener("change", (e) => winnableOnly(e.target.checked));
  $("#again").addEventListener("click", () => {
    $("#end").close();
    startNew(null);
  });
  $("#same").addEventListener("click", () => {
    $("#end").close();
    startNew(view.game.seed);
  });
  $("#look").addEventListener("click", () => $("#end").close());
  for (const button of document.querySelectorAll("[data-close]")) {
    button.addEventListener("click", () => button.closest("dialog").close());
  }
  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]") || e.ctrlKey || e.metaKey || e.altKey) {
      if ((e.ctrlKey || e.metaKey) && e.key === "z" && !document.querySelector("dialog[open]")) {
        e.preventDefault();
        net.send("undo");
      }
      return;
    }
    if (e.target instanceof HTMLInputElement) return;
    const key = e.key.toLowerCase();
    if (key === "u") net.send("undo");
    else if (key === "h" && !isFixed()) net.send("hint");
    else if (key === "d") instant.stock(() => net.send("stock", withAuto({ how: "key" })));
    else if (key === "r" || e.key === "?") openRules();
  });
}

/** The rules of the game and variant on the table, in the page's language. */
function renderRules() {
  const g = view.game;
  if (!g) return;
  const name = g.names[lang()] || g.names.en;
  $("#rules-heading").textContent = t("rules_of", { game: name });
  const variants = t(`variants.${g.game}`);
  const variant = g.variant || Object.keys(variants)[0];
  $("#rules-variant").textContent = typeof variants === "object" ? variants[variant] || "" : "";
  $("#rules-lines").replaceChildren(...rulesOf(g.game, variant).map((line) =>
    Object.assign(document.createElement("li"), { textContent: line })));
}

function openRules() {
  renderRules();
  closeDialogs();
  $("#rules").showModal();
}

function openLedger() {
  renderLedger();
  $("#ledger").showModal();
}

// -- language ----------------------------------------------------------------------------------

function relabel() {
  applyText();
  showNames();
  if (board.table) board.place(false);
  if (view.status) setStatus(view.status);
  if ($("#ledger").open) renderLedger();
  if ($("#rules").open) renderRules();
  renderApart();
}

if (params.get("lang")) setLang(params.get("lang"));
languageSwitch($("#langs"));
$("#menu .keys").before(settingsSection());
onLang(relabel);
applyText();
bindControls();

if (!params.get("id") && !params.get("game")) {
  location.replace("/");
} else if (PLAYED_ONCE && !params.get("id")) {
  showPlayedOnce(params.get("game") || "", params.get("seed"));
} else {
  if (params.get("id")) net.gameId = params.get("id");
  if (params.get("now") === "1" && params.get("id")) {
    // Play now's button led here: the cards at once (the join starts the game's clock, as it does the other
    // side's: README, Play now), and who the game is against
    view.apartAsked = true;
    for (const id of ["#hint", "#new", "#m-new"]) $(id).hidden = true; // a game of Play now has neither
    net.connect(["new", dealFromParams()]);
    loadApart(params.get("id"), null);
  } else {
    net.connect(["new", dealFromParams()]);
  }
}
