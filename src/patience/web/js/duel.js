// The duel page: the lobby (pools, the queue, challenge links, the matches going on), the "match
// found" countdown, then the match (my table, the opponent's progress, one server clock), then the
// result with the seed that opens the commitment and the rematch; or a match watched as a
// spectator (figures only). Every action is an intent the server answers; no rule lives here.

import { Board } from "./board.js";
import { commitmentText, el, formatName, openPage, playNow, refreshUnseen, sha256 } from "./arena.js";
import { Instant } from "./instant.js";
import { onLang, playerName, refusal, say, t } from "./i18n.js";
import { Liveness } from "./liveness.js";
import { $, applyText, confirmDialog, formatTime, pageNotice, points, showUndo, signed, toast } from "./ui.js";
import { DUEL, Net } from "./net.js";
import { attention, notifyToggle, settingsSection } from "./settings.js";
import { lastSeconds, moveSound, sound } from "./sound.js";

const params = new URLSearchParams(location.search);
const MATCH_ID = /^[A-Za-z0-9_-]{8,40}$/; // a duel's id as the server writes it; anything else names no duel
const TOUR = /^[A-Za-z0-9_-]{8,16}$/.test(params.get("t") || "") ? params.get("t") : null; // a tournament's duel
const TOUR_BACK_SECONDS = 8; // after a tournament's duel, back to its standings (and the next pairing)
const OFFER_AFTER_MS = 30000; // a player waiting this long in a live pool is offered Play now in that pool

const view = {
  user: null,
  lobby: null,
  lobbyText: null, // the last lobby message as it came: the same again is not drawn again
  duel: null, // the last "duel" message
  status: null,
  statusAt: 0,
  opp: null,
  oppAt: 0,
  end: null,
  endShown: false,
  challenge: params.get("c"),
  look: null, // what the server says the challenge link is
  startAt: 0, // performance.now() when both clocks start (the countdown's end)
  rematch: null, // {state, by} of the finished match's rematch
  watch: null, // the last "watch" message (spectating)
  watchAt: 0,
  tourPoints: null, // {id, found}: the tournament points the finished duel earned each side
  seekSince: 0, // performance.now() when this page saw its player start waiting in the pool (view.lobby.seeking)
  pressing: false, // Play now was pressed: its answer is awaited
};

const CODE = /^[A-Za-z0-9_-]{8,24}$/;

// -- the connection: the page's one socket client (net.js), with what a duel page says on connecting ----

const place = {
  watchId: MATCH_ID.test(params.get("w") || "") ? params.get("w") : null, // the match this page watches
  seeking: null, // the pool this page waits in: a page that reconnects (a restart, say) joins it again
};

const net = new Net({
  game: onDuel,
  ev: onEvent,
  opened: greet,
  status: (online) => {
    $("#banner").hidden = online; // it goes once the server answers on a socket, not when one merely opens
    if (!online) instant.offline(); // a move drawn and not answered goes back, and is not sent again
  },
  lobby: onLobby,
  challenge: onChallenge,
  look: onLook,
  rematch: onRematch,
  watch: onWatch,
  rej: onRefused,
  err: onError,
  playnow: () => refreshUnseen(), // a result of Play now came in: the badge of "Your games"
}, DUEL);
net.gameId = MATCH_ID.test(params.get("m") || "") ? params.get("m") : null; // a match's page: joined at once

/** A new connection of a page that plays no match: it watches one, or is in the lobby (back in its pool, and
 * the challenge link it was opened with looked at). */
function greet() {
  if (place.watchId) {
    net.raw("watch", { id: place.watchId, cid: net.cid });
    return;
  }
  const again = place.seeking;
  net.raw("lobby", { cid: net.cid });
  if (again) net.raw("seek", { format: again, cid: net.cid }); // back into the queue
  if (view.challenge && CODE.test(view.challenge)) net.raw("look", { code: view.challenge, cid: net.cid });
}

function onRefused(d) {
  instant.refused(d.ack);
  board.snapBack();
  sound("refusal");
  toast(refusal(d, view.duel && view.duel.game, instant.cardOf(d.ack)), "bad");
}

// -- the lobby -----------------------------------------------------------------------------------

function onLobby(d) {
  const same = JSON.stringify(d);
  if (same === view.lobbyText) return; // the arena's view again, unchanged (it comes every few seconds)
  view.lobbyText = same;
  if (!d.seeking) view.seekSince = 0;
  else if (!view.lobby || view.lobby.seeking !== d.seeking || !view.seekSince) view.seekSince = performance.now();
  view.lobby = d;
  for (const fn of unseeked.splice(0)) if (!d.seeking) fn();
  place.seeking = d.seeking;
  if (d.challenge && $("#challenge-box").hidden) onChallenge({ url: `/duel?c=${d.challenge}` });
  if (d.match && !net.gameId) {
    net.gameId = d.match; // a match of mine is going on: back to it
    net.raw("match", { id: d.match, v: 0, cid: net.cid });
    return;
  }
  renderLobby();
}

function renderLobby() {
  const d = view.lobby;
  if (!d) return;
  const signedIn = !!view.user;
  $("#signin-box").hidden = signedIn;
  $("#signin-link").href = `/account?next=${encodeURIComponent(location.pathname + location.search)}`;
  renderLook();
  $("#wait-box").hidden = !d.seeking;
  if (d.seeking) $("#wait-text").textContent = t("duel.you_wait", { format: formatName(d.seeking) });
  $("#playing").textContent = `${t("duel.online_n", { n: d.online ?? 0 })} · ${t("duel.playing_n", { n: d.playing })}`;
  const pools = $("#pools");
  const byGame = new Map();
  for (const pool of d.pools) {
    if (!byGame.has(pool.game)) byGame.set(pool.game, []);
    byGame.get(pool.game).push(pool);
  }
  const focused = pools.contains(document.activeElement) ? document.activeElement : null;
  const refocus = focused && focused.closest(".pool") ?
    `.pool[data-format="${focused.closest(".pool").dataset.format}"] .${[...focused.classList].find((c) => ["seek", "challenge", "playnow"].includes(c))}` : null;
  pools.replaceChildren(...[...byGame.entries()].map(([, list]) => {
    const tile = el("article", { className: "game-tile pool-tile" });
    tile.dataset.game = list[0].game;
    tile.append(el("h2", { className: "tile-name", textContent: formatName(list[0].format).split(" · ")[0] }));
    for (const pool of list) {
      const row = el("div", { className: "pool" });
      row.dataset.format = pool.format;
      const label = el("span", { className: "pool-name", textContent: formatName(pool.format).split(" · ").slice(1).join(" · ") });
      const count = el("span", { className: "pool-count", textContent: pool.waiting ? t("duel.waiting_n", { n: pool.waiting }) : t("duel.nobody") });
      const names = el("span", { className: "pool-queue", textContent: pool.players.map((p) => `${playerName(p.name)} (${p.rating}${p.provisional ? "?" : ""})`).join(", ") });
      const seek = el("button", { type: "button", className: "btn primary seek", textContent: t("duel.seek"), disabled: !signedIn || d.seeking === pool.format });
      seek.title = pool.waiting ? "" : t("duel.queue_empty");
      seek.addEventListener("click", () => net.send("seek", { format: pool.format }));
      const friend = el("button", { type: "button", className: "btn solid challenge", textContent: t("duel.challenge"), disabled: !signedIn });
      friend.addEventListener("click", () => net.send("challenge", { format: pool.format }));
      const now = el("button", { type: "button", className: "btn solid playnow", textContent: t("playnow.button"),
        title: t("playnow.hint"), disabled: !signedIn || view.pressing });
      now.addEventListener("click", () => pressPlayNow(pool.format));
      row.append(label, count, seek, now, friend, names);
      tile.append(row);
    }
    return tile;
  }));
  if (refocus) { // the same button of the same pool keeps the keyboard's focus through the new view
    const again = pools.querySelector(refocus);
    if (again) again.focus();
  }
  renderLive(d.live || []);
}

// -- Play now: the same deal as a player who plays before or after, no waiting ---------------------

const unseeked = []; // called when the lobby says this player waits in no pool any more

/** Stop waiting in the live pool (the unseek intent), resolved once the server says so (or soon anyway). */
function unseek() {
  if (!view.lobby || !view.lobby.seeking) return Promise.resolve();
  return new Promise((resolve) => {
    unseeked.push(resolve);
    net.send("unseek");
    setTimeout(resolve, 1500);
  });
}

async function pressPlayNow(format) {
  if (view.pressing) return;
  view.pressing = true;
  playNowMessage("");
  renderLobby();
  let words = null;
  try {
    await unseek(); // a player waiting in a live pool leaves it first
    words = await playNow(format); // null: on the way to the game's table
  } catch {
    words = t("playnow.err.failed");
  }
  if (words) {
    view.pressing = false;
    playNowMessage(words);
    renderLobby();
  }
}

function playNowMessage(words) {
  $("#playnow-msg").hidden = !words;
  $("#playnow-msg").textContent = words;
}

/** Waiting long in a live pool: Play now in that pool is offered (the waiting goes on until it is pressed). */
function offerPlayNow() {
  const d = view.lobby;
  const long = !!(d && d.seeking && view.seekSince && performance.now() - view.seekSince >= OFFER_AFTER_MS);
  const offer = $("#wait-offer");
  if (offer.hidden === !long) return;
  offer.hidden = !long;
  $("#wait-playnow").disabled = view.pressing;
}

/** The matches going on, to watch: both players with their ratings and the duel. */
function renderLive(list) {
  $("#live-box").hidden = list.length === 0; // shown above the pools while there is a match to watch
  $("#live-list").replaceChildren(...list.map((info) => {
    const item = el("li", { className: "live-match" });
    item.dataset.match = info.id;
    const [a, b] = info.players.map(playerText);
    const who = el("span", { className: "live-players", textContent: t("duel.vs", { a, b }) });
    const what = el("span", { className: "live-format", textContent: formatName(info.format) });
    const watch = el("button", { type: "button", className: "btn solid watch", textContent: t("duel.watch") });
    watch.addEventListener("click", () => startWatching(info.id));
    item.append(who, what, watch);
    return item;
  }));
}

function playerText(p) {
  return `${playerName(p.name)} (${p.rating}${p.provisional ? "?" : ""})`;
}

/** What a challenge link is, as the server said (or at once, for a code that cannot be one). */
function renderLook() {
  const box = $("#accept-box");
  const accept = $("#accept");
  if (!view.challenge) {
    box.hidden = true;
    return;
  }
  const look = CODE.test(view.challenge) ? view.look : { state: "unknown" };
  box.hidden = !look;
  if (!look) return;
  box.dataset.state = look.state;
  box.classList.toggle("bad", look.state !== "open");
  let text = t(`duel.look.${look.state}`, look.by ? {
    name: playerName(look.by.name), rating: `${look.by.rating}${look.by.provisional ? "?" : ""}`, format: formatName(look.format),
  } : {});
  if (look.state === "open" && look.away) text += ` ${t("duel.look.away", { name: playerName(look.by.name) })}`;
  if (look.state === "open" && !view.user) text += ` ${t("duel.look.sign_in")}`;
  $("#accept-text").textContent = text;
  accept.hidden = !(look.state === "open" && view.user && !look.away); // Accept only where it can work
}

function onLook(d) {
  if (d.code !== view.challenge) return;
  view.look = d;
  renderLook();
}

function onChallenge(d) {
  $("#challenge-box").hidden = false;
  $("#challenge-url").value = new URL(d.url, location.origin).toString();
}

// -- the match -----------------------------------------------------------------------------------

const board = new Board($("#board"), {
  // how: how the player made it (fair play's evidence, docs/fairplay.md)
  // a move the server listed as legal is drawn at once (instant.js), then sent like any other
  move: (src, dst, n, how) => instant.move(src, dst, n,
    () => net.send("move", { ...(n == null ? { src, dst } : { src, dst, n }), ...how })),
  stock: (how) => instant.stock(() => net.send("stock", { ...how })),
  select: () => {},
  announce: (text) => announce(text),
});
// nothing is drawn ahead before both clocks start (the server refuses a move then) nor while offline
const instant = new Instant(board, {
  get pending() { return net.pending; },
  get online() { return net.online && !!net.ws && net.ws.readyState === WebSocket.OPEN; },
}, () => !!view.duel && performance.now() >= view.startAt);

function onDuel(d) {
  const same = view.duel && view.duel.id === d.id;
  place.seeking = null;
  if (!same && $("#result").open) $("#result").close(); // a rematch: the new match
  if (!same) view.rematch = null;
  view.duel = d;
  view.end = d.end;
  view.startAt = performance.now() + (d.starts_in || 0);
  view.watch = null; // a page plays or watches, never both
  place.watchId = null;
  document.body.classList.remove("watching");
  $("#lobby").hidden = true;
  view.lobbyText = null; // back in the lobby later: its first view is drawn whatever it says
  $("#spectate").hidden = true;
  $("#arena").hidden = false;
  $("#my-figures").hidden = false;
  $("#challenge-box").hidden = true;
  if (!same) {
    board.setGame(d.game, d.options);
    view.endShown = false;
    instant.reset();
  }
  instant.heard(d);
  board.update(d.table);
  setStatus(d.status);
  setOpp(d.opp);
  showNames();
  const url = new URL(location.href);
  url.searchParams.delete("c");
  url.searchParams.delete("w");
  url.searchParams.set("m", d.id);
  history.replaceState(null, "", url.pathname + url.search);
  playing();
  if (d.starts_in > 0 && !d.end) showFound();
  if (d.end && !view.endShown) showResult();
  if (!same && d.starts_in > 0 && !d.end) opponentFound(d);
}

// -- match found: both players, then the countdown to the start of both clocks -------------------

/** A match found (from the queue, a challenge or a tournament's pairing): heard, and in a background tab the
 * title and a notification say so. */
function opponentFound(d) {
  const other = d.players[1 - d.you];
  if (document.hidden) attention(t("duel.found"), t("duel.notify_body", { name: other ? playerName(other.name) : "" }));
  else sound("found");
}

function showFound() {
  const d = view.duel;
  const dialog = $("#found");
  $("#found-format").textContent = formatName(d.format);
  $("#found-a").textContent = playerText(me());
  $("#found-b").textContent = playerText(opponent());
  countDown();
  if (!dialog.open) dialog.showModal();
}

/** Seconds left of the countdown (on the server's word, counted here); closes "match found" at 0. */
function countDown() {
  const left = Math.max(0, view.startAt - performance.now());
  $("#found-seconds").textContent = String(Math.ceil(left / 1000));
  if (left <= 0 && $("#found").open) {
    $("#found").close();
    announce(t("duel.go"));
  }
}

/** A match's page is its table: no site navigation to tap by mistake (the lobby has it). After the end
 * the result (and its rematch) is a button away. */
function playing() {
  document.body.classList.toggle("in-match", !!view.duel);
  $("#show-result").hidden = !view.end;
}

function onEvent(d) {
  instant.heard(d, d.cid === net.cid);
  if (d.end) view.end = d.end; // before the figures: once the match is over, the pool is in the scores
  if (d.table) board.update(d.table);
  else if (!d.ok) board.snapBack();
  if (d.ok && d.kind === "move" && d.move) moveSound(d.move);
  else if (!d.ok && d.reason) sound("refusal");
  if (d.end && !view.endShown && d.end.winner === view.duel.you) sound("win");
  setStatus(d.status);
  setOpp(d.opp);
  if (!d.ok && d.reason) {
    const points = d.ledger.reduce((sum, line) => sum + line.applied, 0);
    const text = say(d.why, d.reason, view.duel.game);
    toast(points ? `${text} (${signed(points)})` : text, "bad");
  }
  if (d.end) {
    view.end = d.end;
    playing();
    board.clearSelection();
    if (!view.endShown) setTimeout(showResult, 400);
  } else if (d.status.outcome && d.kind !== "opp" && d.kind !== "tick") {
    const pool = d.status.pool ? ` ${t("duel.pool_drains")}` : "";
    toast(t("duel.your_game_over", { name: playerName(opponent().name) }) + pool);
  }
}

function onError(d) {
  instant.refused(d.ack);
  if (place.watchId && d.code === "no_such_match") {
    place.watchId = null; // nothing to watch (any more): back to the lobby
    view.watch = null;
    document.body.classList.remove("watching");
    $("#spectate").hidden = true;
    $("#lobby").hidden = false;
    const url = new URL(location.href);
    url.searchParams.delete("w");
    history.replaceState(null, "", url.pathname + url.search);
    net.raw("lobby", { cid: net.cid });
    pageNotice($("#lobby"), "lost.duel"); // lasting: the address led nowhere
  } else if (d.code === "no_such_match" || d.code === "not_your_match") {
    if (d.code === "no_such_match") pageNotice($("#lobby"), "lost.duel");
    net.gameId = null;
    const url = new URL(location.href);
    url.searchParams.delete("m");
    history.replaceState(null, "", url.pathname + url.search);
    net.raw("lobby", { cid: net.cid });
  }
  board.snapBack();
  if (d.code === "stale_ack") return; // an intent older than one already answered: the newer answer holds
  const known = t(`duel.err.${d.code}`);
  toast(known === `duel.err.${d.code}` ? d.msg : known, "bad");
}

function me() {
  return view.duel ? view.duel.players[view.duel.you] : null;
}

function opponent() {
  return view.duel ? view.duel.players[1 - view.duel.you] : { name: "" };
}

function showNames() {
  const d = view.duel;
  if (!d) return;
  $("#game-name").textContent = t("duel.vs", { a: playerName(me().name), b: playerName(opponent().name) });
  $("#variant-name").textContent = TOUR ? `${formatName(d.format)} · ${t("tour.duel_sub")}` : formatName(d.format);
  if (TOUR) $("#home").href = `/tournament?id=${TOUR}`; // the way back is to the tournament
  const link = $("#opp-name");
  link.textContent = `${playerName(opponent().name)} (${opponent().rating}${opponent().provisional ? "?" : ""})`;
  link.href = `/profile?u=${encodeURIComponent(opponent().id)}`;
  // the deal is fixed before the first move: its commitment is in sight all the match
  $("#commit-short").textContent = `${d.commitment.slice(0, 16)}…`;
  $("#commit-short").title = d.commitment;
  document.title = `${document.title.startsWith("● ") ? "● " : ""}${t("duel.title")} · Patience Arena`;
}

function setStatus(status) {
  view.status = status;
  view.statusAt = performance.now();
  $("#score").textContent = points(status.score);
  showUndo(status);
  $("#giveup").disabled = !!status.outcome;
  // Der Fächer: the pool drains until the match ends, after this player's own game too (RULES.md §3)
  $("#pool-box").hidden = !status.pool || !!view.end;
  tick();
}

function setOpp(progress) {
  view.opp = progress;
  view.oppAt = performance.now();
  $("#opp-score").textContent = points(progress.score);
  $("#opp-found").textContent = `${progress.foundation_cards}/52`;
  $("#opp-moves").textContent = String(progress.moves);
  $("#opp-outcome").textContent = progress.outcome ? t(`outcome.${progress.outcome}`) : "";
  $("#opp").dataset.over = progress.outcome ? "yes" : "no";
  $("#opp-pool-box").hidden = progress.pool == null || !!view.end;
  tick();
}

/** A pool ``value`` told at ``since`` (performance.now()), drained on to now: in a duel both pools drain
 * at the same rate (the one of this player's own pool) until the match ends. */
function poolNow(value, since) {
  const p = view.status && view.status.pool;
  if (!p || !p.zero_ms || p.zero_ms <= p.ms || view.end) return value;
  return Math.max(0, Math.floor(value - (p.value * (performance.now() - since)) / (p.zero_ms - p.ms)));
}

function tick() {
  offerPlayNow();
  if ($("#found").open) countDown();
  const s = view.status;
  if (s) {
    const ms = s.clock.ms + (s.clock.running ? sinceStart(view.statusAt) : 0);
    const left = Math.max(0, s.clock.limit - ms);
    $("#clock").textContent = formatTime(Math.ceil(left / 1000) * 1000);
    $("#clock").classList.toggle("urgent", s.clock.running && left < 30000);
    lastSeconds(lastTicks, left, s.clock.running && sinceStart(view.statusAt) > 0 && !s.outcome);
  }
  const o = view.opp;
  if (o) {
    const running = !o.outcome && !(view.end);
    const left = Math.max(0, o.left_ms - (running ? sinceStart(view.oppAt) : 0));
    $("#opp-left").textContent = formatTime(Math.ceil(left / 1000) * 1000);
    if (o.pool != null) $("#opp-pool").textContent = String(poolNow(o.pool, view.oppAt));
  }
  if (s && s.pool) $("#pool").textContent = String(poolNow(s.pool.value, view.statusAt));
  if (view.watch) watchTick();
}
const lastTicks = {}; // the clock's last ten seconds: the one last ticked
setInterval(tick, 250);

/** Milliseconds of clock time since ``since`` (performance.now()): none before the countdown's end. */
function sinceStart(since) {
  return Math.max(0, performance.now() - Math.max(since, view.startAt));
}

function announce(text) {
  const live = $("#live");
  live.textContent = "";
  setTimeout(() => (live.textContent = text), 30);
}

// -- the result ----------------------------------------------------------------------------------

async function showResult() {
  const d = view.duel;
  const end = view.end;
  if (!d || !end) return;
  view.endShown = true;
  const dialog = $("#result");
  const mine = d.you;
  const title = end.winner == null ? t("duel.draw") : end.winner === mine ? t("duel.won") : t("duel.lost");
  $("#result-title").textContent = title;
  dialog.dataset.outcome = end.winner == null ? "draw" : end.winner === mine ? "won" : "lost";
  const rows = $("#result-rows");
  rows.replaceChildren();
  for (const side of [mine, 1 - mine]) {
    const tr = rows.insertRow();
    tr.dataset.side = side === mine ? "you" : "opp";
    const before = d.players[side];
    const after = end.ratings[side];
    // the name, then how the game ended on a line of its own (a narrow phone keeps names whole)
    const who = tr.insertCell();
    const name = document.createElement("span");
    name.className = "result-name";
    name.textContent = side === mine ? `${playerName(before.name)} (${t("duel.you")})` : playerName(before.name);
    who.append(name);
    if (end.outcomes && end.outcomes[side]) {
      const how = document.createElement("span");
      how.className = "result-how";
      how.textContent = t(`outcome.${end.outcomes[side]}`);
      who.append(how);
    }
    tr.insertCell().textContent = points(end.scores[side]);
    // Der Fächer: what the pool added when the match ended, in the score already
    if (end.pools) tr.insertCell().textContent = String(end.pools[side]);
    tr.insertCell().textContent = end.winner === side ? signed(end.bonus) : "";
    tr.insertCell().textContent = points(end.finals[side]);
    const diff = after.rating - before.rating;
    const rated = tr.insertCell();
    rated.textContent = `${after.rating}${after.provisional ? "?" : ""} (${signed(diff)})`;
    // what the ladder's rules did to this change and why (as the server wrote it with the result)
    const change = end.changes && end.changes[side];
    if (change && change.reason !== "rated") {
      const why = document.createElement("span");
      why.className = "result-how result-why";
      why.dataset.reason = change.reason;
      why.textContent = t(`profile.change.${change.reason}`,
        { points: signed(Math.round(change.reason === "held" ? change.held : change.applied)) });
      rated.append(why);
    }
  }
  for (const node of dialog.querySelectorAll(".pool-col")) node.hidden = !end.pools;
  $("#commitment").textContent = d.commitment;
  $("#to-replay").href = `/match?id=${encodeURIComponent(d.id)}`;
  renderRematch();
  if (TOUR) {
    backToTournament(TOUR, d.id);
    if (view.tourPoints && view.tourPoints.id === d.id) renderTourPoints(); // shown again: as read
    else tourPoints(TOUR, d);
  }
  const verify = $("#verify");
  verify.textContent = "…";
  if (!dialog.open) dialog.showModal();
  try {
    // the duel's options are sent as committed: those not at their default
    const digest = await sha256(commitmentText(d.game, d.options, end.seed, end.nonce));
    verify.textContent = digest === d.commitment ? t("duel.verified", { seed: end.seed }) : t("duel.not_verified");
    verify.dataset.ok = String(digest === d.commitment);
  } catch {
    verify.textContent = `${t("duel.commitment")}: ${end.seed}${end.nonce ? `, nonce ${end.nonce}` : ""}`;
  }
}

/** The tournament points the duel earned each player, as the tournament's standings say (read again a
 * few times while the finished duel is not in them yet). */
async function tourPoints(tour, d, tries = 4) {
  let standings = null;
  try {
    const answer = await fetch(`/api/tournaments/${encodeURIComponent(tour)}`, { cache: "no-store" });
    if (answer.ok) standings = await answer.json();
  } catch {
    standings = null;
  }
  const found = [0, 1].map((side) => {
    const line = standings && standings.players.find((p) => p.id === d.players[side].id);
    return line ? line.duels.find((duel) => duel.match === d.id) : undefined;
  });
  if (found.some((duel) => !duel)) {
    if (tries > 1 && view.duel && view.duel.id === d.id) setTimeout(() => tourPoints(tour, d, tries - 1), 1000);
    return;
  }
  view.tourPoints = { id: d.id, found };
  renderTourPoints();
}

function renderTourPoints() {
  const got = view.tourPoints;
  if (!got || !view.duel || got.id !== view.duel.id) return;
  for (const side of [0, 1]) {
    const row = $(`#result-rows tr[data-side="${side === view.duel.you ? "you" : "opp"}"]`);
    if (!row) continue;
    let note = row.querySelector(".result-tour");
    if (!note) {
      note = document.createElement("span");
      note.className = "result-how result-tour";
      row.cells[0].append(note);
    }
    const duel = got.found[side];
    const earned = t(`tour.earned.${duel.points === 1 ? "one" : "many"}`, { n: duel.points });
    note.textContent = duel.double ? t("tour.doubled", { points: earned }) : earned;
  }
}

/** A tournament's duel has ended: no rematch; back to the tournament's standings, where the next pairing
 * comes, by itself after a few seconds unless the player stays to look at the result. */
function backToTournament(tour, matchId) {
  $("#rematch-box").hidden = true;
  const back = $("#to-lobby");
  back.href = `/tournament?id=${tour}`;
  back.dataset.t = "tour.back";
  back.textContent = t("tour.back");
  if (view.tourBack === matchId) return; // shown again (a language change, a reconnect): one countdown
  view.tourBack = matchId;
  let left = TOUR_BACK_SECONDS;
  const note = document.createElement("p");
  note.className = "facts";
  note.id = "tour-next";
  note.setAttribute("aria-live", "polite");
  const stay = document.createElement("button");
  stay.type = "button";
  stay.className = "btn solid";
  stay.id = "tour-stay";
  stay.textContent = t("tour.stay");
  const say = () => (note.firstChild.textContent = `${t("tour.back_in", { n: left })} `);
  note.append("", stay);
  say();
  $("#rematch-box").after(note);
  const timer = setInterval(() => {
    left -= 1;
    if (left > 0) return say();
    clearInterval(timer);
    if (view.duel && view.duel.id === matchId) location.href = back.href;
  }, 1000);
  stay.addEventListener("click", () => {
    clearInterval(timer);
    note.remove();
  });
}

// -- rematch -------------------------------------------------------------------------------------

function onRematch(d) {
  if (!view.duel || d.id !== view.duel.id) return; // about a match this page has left
  view.rematch = d;
  if (!$("#result").open && d.by !== view.duel.you) showResult(); // the opponent's word: show it
  else renderRematch();
}

function renderRematch() {
  const r = view.rematch;
  const mine = view.duel ? view.duel.you : 0;
  const name = playerName(opponent().name);
  const button = $("#rematch");
  const no = $("#rematch-no");
  let note = "";
  button.hidden = false;
  button.disabled = false;
  button.textContent = t("duel.rematch");
  no.hidden = true;
  $("#rematch-box").dataset.state = r ? r.state : "";
  if (r && r.state === "offered" && r.by === mine) {
    note = t("duel.rematch_offered_you", { name });
    button.disabled = true;
    no.hidden = false;
    no.textContent = t("duel.rematch_cancel");
  } else if (r && r.state === "offered") {
    note = t("duel.rematch_offered_opp", { name });
    button.textContent = t("duel.rematch_accept");
    no.hidden = false;
    no.textContent = t("duel.rematch_decline");
  } else if (r && r.state === "left" && r.by !== mine) {
    note = t("duel.rematch_left", { name });
    button.hidden = true;
  } else if (r && r.by !== mine && (r.state === "declined" || r.state === "withdrew")) {
    note = t(`duel.rematch_${r.state}`, { name });
  }
  $("#rematch-note").textContent = note;
}

// -- watching a match: both players' figures, never a card ---------------------------------------

function startWatching(id) {
  place.watchId = id;
  net.raw("watch", { id, cid: net.cid });
}

function onWatch(d) {
  view.watch = d;
  view.watchAt = performance.now();
  view.startAt = performance.now() + (d.starts_in || 0);
  $("#lobby").hidden = true;
  view.lobbyText = null; // back in the lobby later: its first view is drawn whatever it says
  $("#spectate").hidden = false;
  document.body.classList.add("watching");
  const url = new URL(location.href);
  url.searchParams.delete("c");
  url.searchParams.set("w", d.id);
  history.replaceState(null, "", url.pathname + url.search);
  renderWatch();
}

function renderWatch() {
  const d = view.watch;
  if (!d) return;
  $("#game-name").textContent = t("duel.vs", { a: playerName(d.players[0].name), b: playerName(d.players[1].name) });
  $("#variant-name").textContent = formatName(d.format);
  $("#watch-commitment").textContent = d.commitment;
  const sides = $("#watch-sides");
  sides.replaceChildren(...d.players.map((player, side) => {
    const p = d.sides[side];
    const card = el("article", { className: "watch-side" });
    card.dataset.side = String(side);
    const name = el("a", { className: "watch-name", textContent: playerText(player) });
    name.href = `/profile?u=${encodeURIComponent(player.id)}`;
    card.append(name);
    const figures = [["duel.score", points(p.score), "score"], ["duel.foundations", `${p.foundation_cards}/52`, "found"],
      ["duel.moves", String(p.moves), "moves"], ["duel.left", "", "left"]];
    if (p.pool != null && !d.end) figures.push(["pool", String(p.pool), "pool"]);
    for (const [label, value, key] of figures) {
      const fig = el("p", { className: "watch-fig" });
      fig.append(el("span", { className: "label", textContent: t(label) }),
        el("strong", { className: `watch-${key}`, textContent: value }));
      card.append(fig);
    }
    if (p.outcome) card.append(el("p", { className: "opp-outcome", textContent: t(`outcome.${p.outcome}`) }));
    return card;
  }));
  const end = d.end;
  $("#watch-end").hidden = !end;
  if (end) {
    const winner = end.winner == null ? null : d.players[end.winner];
    const finals = `${points(end.finals[0])} : ${points(end.finals[1])}`;
    $("#watch-result").textContent = `${winner ? t("duel.watch_won", { name: playerName(winner.name) }) : t("duel.draw")} (${finals})`;
    $("#watch-replay").href = `/match?id=${encodeURIComponent(d.id)}`;
  }
  document.title = `${t("duel.title")} · Patience Arena`;
  watchTick();
}

function watchTick() {
  const d = view.watch;
  const left = Math.max(0, view.startAt - performance.now());
  $("#watch-count").hidden = left <= 0 || !!d.end;
  $("#watch-seconds").textContent = String(Math.ceil(left / 1000));
  for (const card of document.querySelectorAll(".watch-side")) {
    const p = d.sides[Number(card.dataset.side)];
    const running = !p.outcome && !d.end;
    const ms = Math.max(0, p.left_ms - (running ? sinceStart(view.watchAt) : 0));
    card.querySelector(".watch-left").textContent = formatTime(Math.ceil(ms / 1000) * 1000);
  }
}

// -- controls ------------------------------------------------------------------------------------

function bind() {
  $("#undo").addEventListener("click", () => net.send("undo"));
  $("#giveup").addEventListener("click", async () => {
    if (view.status && !view.status.outcome && (await confirmDialog(t("duel.confirm_giveup")))) net.send("giveup");
  });
  $("#unseek").addEventListener("click", () => net.send("unseek"));
  $("#wait-playnow").addEventListener("click", () => view.lobby && view.lobby.seeking && pressPlayNow(view.lobby.seeking));
  $("#accept").addEventListener("click", () => {
    net.send("accept", { code: view.challenge });
    view.challenge = null;
    $("#accept-box").hidden = true;
  });
  $("#rematch").addEventListener("click", () => net.send("rematch", { id: view.duel.id }));
  $("#rematch-no").addEventListener("click", () => net.send("decline", { id: view.duel.id }));
  $("#found").addEventListener("cancel", (e) => e.preventDefault()); // the countdown runs to its end
  $("#show-result").addEventListener("click", () => showResult());
  $("#challenge-copy").addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText($("#challenge-url").value);
    } catch {
      $("#challenge-url").select();
      document.execCommand("copy");
    }
    toast(t("copied"));
  });
  $("#look").addEventListener("click", () => $("#result").close());
  $("#settings").append(settingsSection());
  $("#settings-btn").addEventListener("click", () => $("#settings").showModal());
  for (const button of document.querySelectorAll("#settings [data-close]")) {
    button.addEventListener("click", () => $("#settings").close());
  }
  $("#notify-box").append(notifyToggle());
  $("#home").addEventListener("click", async (e) => {
    if (!view.duel || view.end) return;
    e.preventDefault(); // one stray tap must not leave a match
    if (await confirmDialog(t("duel.confirm_leave"))) location.href = e.currentTarget.href;
  });
  document.addEventListener("keydown", (e) => {
    if (document.querySelector("dialog[open]") || e.target instanceof HTMLInputElement) return;
    const key = e.key.toLowerCase();
    if (key === "u" || ((e.ctrlKey || e.metaKey) && key === "z")) net.send("undo");
    else if (key === "d" && !e.ctrlKey && !e.metaKey) instant.stock(() => net.send("stock", { how: "key" }));
  });
}

function relabel() {
  applyText();
  showNames();
  renderLobby();
  renderLook();
  renderWatch();
  if ($("#found").open) showFound();
  if (board.table) board.place(false);
  if (view.status) setStatus(view.status);
  if (view.opp) setOpp(view.opp);
  if ($("#result").open) showResult();
}

async function main() {
  view.user = await openPage();
  onLang(relabel);
  bind();
  relabel();
  for (const key of ["m", "w"]) {
    if (params.has(key) && !MATCH_ID.test(params.get(key))) { // an address naming no duel: said, in the lobby
      pageNotice($("#lobby"), "lost.duel");
      const url = new URL(location.href);
      url.searchParams.delete(key);
      history.replaceState(null, "", url.pathname + url.search);
    }
  }
  net.connect(null);
}

main();
