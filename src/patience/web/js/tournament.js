// Tournaments: the list (to come, going on, lately ended) and the form that makes one; or one tournament
// with its live standings, joining, pausing and coming back. The server pairs the players and counts the
// points; this page shows what it sends and goes to the duel it starts.

import { el, formatName, gameName, noAnswer, openPage, postForm } from "./arena.js";
import { lang, onLang, playerName, t } from "./i18n.js";
import { $, applyText, formatTime, getJSON, pageNotice } from "./ui.js";
import { randomId } from "./net.js";

const params = new URLSearchParams(location.search);
const ID = /^[A-Za-z0-9_-]{8,16}$/.test(params.get("id") || "") ? params.get("id") : null;
let user = null;
let tour = null; // the last "tour" message
let tourAt = 0; // performance.now() when it came
let message = "";
let list = null;

// -- one tournament, live on the websocket -------------------------------------------------------

const net = {
  ws: null,
  cid: randomId(),
  retry: 0,
  open() {
    const scheme = location.protocol === "https:" ? "wss:" : "ws:";
    const ws = new WebSocket(`${scheme}//${location.host}/ws`);
    this.ws = ws;
    ws.onopen = () => this.send("tour", { id: ID });
    ws.onmessage = (e) => {
      this.retry = 0;
      $("#banner").hidden = true;
      receive(e.data);
    };
    ws.onclose = () => {
      if (this.ws !== ws) return;
      this.ws = null;
      $("#banner").hidden = false;
      setTimeout(() => this.open(), Math.min(5000, 300 * 2 ** this.retry++));
    };
  },
  send(type, data) {
    if (this.ws && this.ws.readyState === WebSocket.OPEN) this.ws.send(JSON.stringify({ t: type, d: { ...data, cid: this.cid } }));
  },
};

function receive(text) {
  let msg;
  try {
    msg = JSON.parse(text);
  } catch {
    return;
  }
  const d = msg.d || {};
  if (msg.t === "tour" && d.id === ID) {
    tour = d;
    tourAt = performance.now();
    if (d.joined) message = "";
    render();
  } else if (msg.t === "duel" && !d.end) {
    // paired: the duel is played on the duel page, which comes back here when it ends
    location.href = `/duel?${new URLSearchParams({ m: d.id, t: ID })}`;
  } else if (msg.t === "err" && d.code === "no_such_tournament" && !tour) {
    $("#tour-one").hidden = true; // an address naming no tournament: said, with no empty panel
    pageNotice($("main"), "lost.tournament");
  } else if (msg.t === "err") {
    message = t(`tour.err.${d.code}`);
    if (message === `tour.err.${d.code}`) message = d.msg || t("tour.err.failed");
    render();
  }
}

function tourName(d) {
  return d.name || t("tour.hourly", { game: gameName(d.format.split("/")[0]) });
}

/** "1 point", "4 points" (``key``: tour.n_points, or tour.with_points after a verb). */
function pointsText(n, key = "tour.n_points") {
  return t(`${key}.${n === 1 ? "one" : "many"}`, { n });
}

/** Time left as h:mm:ss (m:ss under an hour). */
function left(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  return s < 3600 ? formatTime(ms) : `${Math.floor(s / 3600)}:${formatTime((s % 3600) * 1000).padStart(5, "0")}`;
}

function clockText() {
  if (!tour) return "";
  const since = performance.now() - tourAt;
  if (tour.state === "soon" && tour.starts_in - since > 86_400_000) {
    const at = new Date(Date.now() + tour.starts_in - since);
    return t("tour.starts_on", { time: at.toLocaleString(lang(), { dateStyle: "medium", timeStyle: "short" }) });
  }
  if (tour.state === "soon") return t("tour.starts_in", { time: left(tour.starts_in - since) });
  if (tour.state === "on") return t("tour.ends_in", { time: left(tour.ends_in - since) });
  return t("tour.ended");
}

/** After the end: who won (those sharing the first rank), and that duels still going on count. */
function endText(d) {
  const first = d.players.filter((line) => line.rank === 1 && line.points > 0);
  let text = first.length ? t(first.length > 1 ? "tour.winners" : "tour.winner",
    { names: first.map((line) => playerName(line.name)).join(", "), points: pointsText(first[0].points, "tour.with_points") }) : "";
  if (d.players.some((line) => line.playing)) text = `${text} ${t("tour.still_playing")}`.trim();
  return text;
}

function renderOne() {
  const d = tour;
  $("#tour-one").hidden = !d; // nothing to show before the server has said what the tournament is
  if (!d) return;
  document.title = `${tourName(d)} · Patience Arena`;
  $("#tour-name").textContent = tourName(d);
  let facts = d.by ? t("tour.facts", { format: formatName(d.format), minutes: d.minutes, by: d.by })
    : t("tour.facts_site", { format: formatName(d.format), minutes: d.minutes });
  if (d.locked) facts += ` · ${t("tour.locked")}`;
  $("#tour-facts").textContent = facts;
  $("#tour-clock").textContent = clockText();
  $("#tour-clock").classList.toggle("over", d.state === "over");
  const actions = $("#tour-actions");
  actions.replaceChildren();
  if (d.state !== "over") {
    if (!user) {
      actions.append(el("a", { className: "btn primary", href: `/account?next=${encodeURIComponent(location.pathname + location.search)}`,
        textContent: t("tour.sign_in") }));
    } else if (!d.joined || d.paused) {
      const needs = d.locked && !d.joined;
      let input = null;
      if (needs) {
        input = el("input", { id: "tour-password", type: "password", autocomplete: "off", maxLength: 100 });
        actions.append(el("label", {}, el("span", { textContent: `${t("tour.password")} ` }), input));
      }
      const button = el("button", { type: "button", className: "btn primary", id: "tour-join",
        textContent: t(d.joined ? "tour.resume" : "tour.join") });
      button.addEventListener("click", () => net.send("tjoin", { id: ID, password: input ? input.value : "" }));
      actions.append(button);
    } else {
      const button = el("button", { type: "button", className: "btn solid", id: "tour-pause", textContent: t("tour.pause") });
      button.addEventListener("click", () => net.send("tpause", { id: ID }));
      actions.append(button);
    }
    if (d.playing) {
      actions.append(el("a", { className: "btn primary", id: "tour-to-duel", textContent: t("tour.to_duel"),
        href: `/duel?${new URLSearchParams({ m: d.playing, t: ID })}` }));
    }
  }
  let note = message;
  if (!note && d.joined && d.state !== "over") {
    note = t(d.playing ? "tour.playing" : d.paused ? "tour.paused" : d.state === "soon" ? "tour.joined_soon" : "tour.joined");
  }
  if (!note && d.state === "over") note = endText(d);
  $("#tour-msg").hidden = !note;
  $("#tour-msg").textContent = note;
  const rows = $("#tour-rows");
  rows.replaceChildren();
  for (const line of d.players) {
    const tr = rows.insertRow();
    tr.dataset.id = line.id;
    const mine = Boolean(user && line.id === user.id);
    if (mine) tr.className = "mine";
    tr.insertCell().textContent = String(line.rank);
    const who = tr.insertCell();
    who.append(el("a", { href: `/profile?u=${encodeURIComponent(line.id)}`, textContent: playerName(line.name) }));
    if (mine) who.append(" ", el("span", { className: "tour-you small", textContent: `(${t("tour.you")})` }));
    if (line.fire) {
      const fire = el("span", { className: "tour-fire", title: t("tour.fire"), textContent: "×2" });
      fire.setAttribute("aria-label", t("tour.fire"));
      fire.setAttribute("role", "img");
      who.append(" ", fire);
    }
    if (line.paused) who.append(" ", el("span", { className: "small", textContent: `(${t("tour.paused_tag")})` }));
    Object.assign(tr.insertCell(), { className: "tour-rating", textContent: `${line.rating}${line.provisional ? "?" : ""}` });
    Object.assign(tr.insertCell(), { className: "tour-points", textContent: String(line.points) });
    const duels = el("div", { className: "tour-duels" });
    for (const duel of line.duels) {
      const label = t("tour.duel_title", { result: t(`tour.result.${duel.result}`), opponent: playerName(duel.opponent),
        points: pointsText(duel.points) });
      const link = el("a", { href: `/match?id=${encodeURIComponent(duel.match)}`, textContent: String(duel.points), title: label });
      link.dataset.result = duel.result;
      link.setAttribute("aria-label", label);
      duels.append(link);
    }
    if (line.playing && !mine) {
      const watch = el("a", { className: "tour-watch", href: `/duel?w=${encodeURIComponent(line.playing)}`, title: t("tour.watch") },
        el("span", { textContent: "▶", ariaHidden: "true" }), el("span", { className: "tour-watch-word", textContent: ` ${t("tour.watch")}` }));
      watch.setAttribute("aria-label", t("tour.watch"));
      duels.append(watch);
    }
    tr.insertCell().append(duels);
  }
  if (!d.players.length) {
    const cell = rows.insertRow().insertCell();
    cell.colSpan = 5;
    cell.textContent = "—";
  }
}

setInterval(() => {
  if (tour) $("#tour-clock").textContent = clockText();
}, 1000);

// -- the list and the form ---------------------------------------------------------------------

function when(entry) {
  const now = list.now_ms;
  const at = entry.state === "soon" ? entry.starts_ms : entry.ends_ms;
  const time = new Date(at).toLocaleString(lang(), { dateStyle: Math.abs(at - now) > 86400000 ? "medium" : undefined,
    timeStyle: "short" });
  return t(`tour.${entry.state}`, { time });
}

function renderList() {
  $("#tour-list-box").hidden = false;
  $("#tour-make-box").hidden = false;
  if (!list) return;
  const rows = $("#tour-list");
  rows.replaceChildren();
  for (const entry of list.tournaments) {
    const tr = rows.insertRow();
    tr.dataset.state = entry.state;
    const name = tr.insertCell();
    name.append(el("a", { href: `/tournament?id=${encodeURIComponent(entry.id)}`, textContent: tourName(entry) }));
    if (entry.joined) name.append(" ", el("span", { className: "tour-joined", textContent: t("tour.joined_tag") }));
    if (entry.locked) name.append(" ", el("span", { className: "small", textContent: `(${t("tour.locked")})` }));
    name.append(el("span", { className: "small tour-format-inline", textContent: formatName(entry.format) }));
    Object.assign(tr.insertCell(), { className: "tour-format", textContent: formatName(entry.format) });
    tr.insertCell().textContent = when(entry);
    Object.assign(tr.insertCell(), { className: "tour-players", textContent: String(entry.players) });
  }
  if (!list.tournaments.length) {
    const cell = rows.insertRow().insertCell();
    cell.colSpan = 4;
    cell.textContent = t("tour.none");
  }
  [$("#make-minutes").min, $("#make-minutes").max] = list.minutes.map(String); // the server's rule
  $("#tour-make-signin").hidden = Boolean(user);
  $("#tour-make").hidden = !user;
  const select = $("#make-format");
  const chosen = select.value;
  select.replaceChildren(...list.formats.map((key) => el("option", { value: key, textContent: formatName(key) })));
  if (chosen) select.value = chosen;
}

async function make(e) {
  e.preventDefault();
  const start = $("#make-start").value;
  const answer = await postForm("/api/tournaments", {
    name: $("#make-name").value, format: $("#make-format").value, minutes: $("#make-minutes").value,
    start_ms: start ? String(new Date(start).getTime()) : "0",
    password: $("#make-locked").checked ? $("#make-password").value : "",
  });
  if (answer.status === 200) {
    location.href = answer.url;
    return;
  }
  const msg = $("#make-msg");
  msg.hidden = false;
  msg.textContent = answer.status ? formError(answer) : t("offline.failed");
}

/** What was wrong with the form, in the page's language: each mistake (``answer.error``) its own sentence,
 * with the server's limits; a code this page does not know: the server's own sentence. */
function formError(answer) {
  const key = `tour.err.${answer.error}`;
  const limits = (list && list.limits) || {};
  const [min, max] = (list && list.minutes) || [15, 120];
  const [shortest, longest] = limits.name || [3, 60];
  const said = t(key, { shortest, longest, min, max, days: limits.ahead_days ?? 7, password: limits.password ?? 100,
    open: limits.open ?? 3, wait: waitText(answer.retry_after) });
  return said !== key && typeof said === "string" ? said
    : t("tour.err.bad_tournament", { msg: answer.msg || answer.error || "" });
}

/** A wait in seconds as "40 s", "25 min" or "3 h" (rounded up). */
function waitText(seconds) {
  const s = Math.max(1, Number(seconds) || 1);
  if (s < 120) return `${Math.ceil(s)} s`;
  if (s < 7200) return `${Math.ceil(s / 60)} min`;
  return `${Math.ceil(s / 3600)} h`;
}

function render() {
  applyText();
  if (ID) renderOne();
  else renderList();
}

async function main() {
  user = await openPage();
  onLang(render);
  if (ID) {
    $("#tour-one").hidden = false;
    net.open();
  } else {
    if (params.has("id")) pageNotice($("main"), "lost.tournament"); // no tournament has an id like this
    $("#tour-make").addEventListener("submit", make);
    $("#make-locked").addEventListener("change", () => {
      const on = $("#make-locked").checked;
      $("#make-password-box").hidden = !on;
      $("#make-password").required = on;
      if (on) $("#make-password").focus();
    });
    list = await getJSON("/api/tournaments", { cache: "no-store" });
    if (!list) noAnswer("offline.failed"); // no list and no form: why
  }
  render();
}

main();
