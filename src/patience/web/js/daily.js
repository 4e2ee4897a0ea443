// The deal of the day: each game's leaderboard of the day, the button that starts (or goes on with) one's
// one attempt, and for a day that is over its deal key, checked against the commitment here in the browser.

import { commitmentText, el, gameName, noAnswer, openPage, postForm, sha256 } from "./arena.js";
import { lang, onLang, playerName, t } from "./i18n.js";
import { $, applyText, askJSON, formatTime, getJSON, points } from "./ui.js";

const params = new URLSearchParams(location.search);
const FIRST = "reloaded"; // the tab shown when the address names none (the server lists the games: data.games)
let game = /^[a-z]{1,20}$/.test(params.get("game") || "") ? params.get("game") : FIRST;
let day = /^\d{4}-\d{2}-\d{2}$/.test(params.get("day") || "") ? params.get("day") : null;
let user = null;
let message = "";
let month = null; // the calendar's month (YYYY-MM), this one until the player turns it
const mine = new Map(); // month → the server's answer (/api/daily/mine)

function address() {
  const query = new URLSearchParams({ game });
  if (day) query.set("day", day);
  return `/daily?${query}`;
}

/** The days before ``today`` (YYYY-MM-DD, UTC), newest first. */
function earlierDays(today, n) {
  const base = Date.parse(`${today}T00:00:00Z`);
  return Array.from({ length: n }, (_, i) => new Date(base - (i + 1) * 86400000).toISOString().slice(0, 10));
}

async function start() {
  const answer = await postForm(`/api/daily/${game}/start`, {});
  if (answer.status === 200) {
    location.href = `/play?${new URLSearchParams({ game, id: answer.id })}`;
    return;
  }
  const key = { attempt_over: "daily.over", elsewhere: "daily.elsewhere", sign_in: "daily.sign_in" }[answer.error];
  message = key ? t(key) : t("daily.failed");
  render();
}

async function render() {
  applyText();
  const query = day ? `?day=${day}` : "";
  const data = await askJSON(`/api/daily/${game}${query}`, { cache: "no-store" });
  noAnswer(data.status ? null : "offline.failed"); // no answer: the day as it was, and why
  if (!data.status) return;
  if (data.error === "bad_game" && game !== FIRST) {
    game = FIRST; // an address naming a game without a deal of the day
    history.replaceState(null, "", address());
    return render();
  }
  if (data.error && day) {
    day = null; // a day the server does not show: today's instead
    history.replaceState(null, "", address());
    return render();
  }
  if (data.error) {
    $("#daily-msg").hidden = false;
    $("#daily-msg").textContent = t("daily.failed");
    return;
  }
  $("#tabs").replaceChildren(...data.games.map((id) => {
    const tab = el("a", { className: "tab", href: `/daily?game=${id}`, textContent: gameName(id) });
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-selected", String(id === game));
    tab.addEventListener("click", (e) => {
      e.preventDefault();
      game = id;
      message = "";
      history.replaceState(null, "", address());
      render();
    });
    return tab;
  }));
  const names = t(`variants.${game}`);
  const variant = (names && names[data.variant]) || (data.variant === "standard" ? "" : data.variant);
  $("#daily-day").textContent = t("daily.day", { game: gameName(game), variant, day: data.day }).replace(" ·  · ", " · ");
  const actions = $("#daily-actions");
  actions.replaceChildren();
  if (!data.over) {
    const practice = user && data.practice; // a deal of one's own, on no board (docs/fairplay.md)
    if (practice) {
      actions.append(el("strong", { id: "daily-practice", textContent: t("daily.practice.title") }), " ",
        el("span", { id: "daily-practice-why", textContent: t(`daily.practice.${practice.why}`) }), el("br"));
      if (practice.outcome) {
        actions.append(el("span", { id: "daily-done", textContent: t("daily.practice.done",
          { outcome: t(`outcome.${practice.outcome}`).replace(/!$/, ""), score: points(practice.score) }) }));
      } else {
        const button = el("button", { type: "button", className: "btn primary", id: "daily-play",
          textContent: t(practice.begun ? "daily.practice.go_on" : "daily.practice.play") });
        button.addEventListener("click", start);
        actions.append(button);
      }
    } else if (user) {
      const mine = data.entries.find((entry) => entry.user === user.id);
      if (mine && mine.outcome) { // one attempt a day, and this one is over: its result, no button
        actions.append(el("span", { id: "daily-done", textContent: t("daily.done",
          { outcome: t(`outcome.${mine.outcome}`).replace(/!$/, ""), score: points(mine.score), rank: mine.rank }) }));
      } else {
        const button = el("button", { type: "button", className: "btn primary", id: "daily-play",
          textContent: t(mine ? "daily.go_on" : "daily.play") });
        button.addEventListener("click", start);
        actions.append(button);
      }
    } else {
      actions.append(el("a", { className: "btn primary", href: `/account?next=${encodeURIComponent(address())}`,
        textContent: t("daily.sign_in") }), " ", el("span", { className: "small", textContent: t("daily.signed_out") }));
    }
  }
  const noDeal = data.over && !data.commitment; // a day before there were deals of the day
  const said = noDeal ? t("lost.day", { day: data.day }) : message;
  $("#daily-msg").hidden = !said;
  $("#daily-msg").textContent = said;
  $("#daily-commitment").textContent = data.commitment || "—";
  $("#daily-commitment").parentElement.hidden = noDeal;
  $(".daily-board").hidden = noDeal;
  const reveal = $("#daily-reveal");
  reveal.replaceChildren();
  if (data.over && data.seed) {
    const ok = (await sha256(commitmentText(game, data.options, data.seed, ""))) === data.commitment;
    reveal.append(`${t("daily.key")}: `, el("code", { className: "daily-code", textContent: data.seed }), " ",
      el("span", { className: "verify", textContent: t(ok ? "daily.verified" : "daily.not_verified") }), " ",
      el("a", { href: `/api/daily/${game}/${data.day}/record`, textContent: t("daily.record") }));
    reveal.querySelector(".verify").dataset.ok = String(ok);
  } else if (data.commitment) {
    reveal.textContent = t("daily.hidden");
  }
  const rows = $("#rows");
  rows.replaceChildren();
  for (const entry of data.entries) {
    const tr = rows.insertRow();
    if (entry.user === (user && user.id)) tr.className = "mine";
    tr.insertCell().textContent = String(entry.rank);
    tr.insertCell().append(el("a", { href: `/profile?u=${encodeURIComponent(entry.user)}`, textContent: playerName(entry.name) }));
    tr.insertCell().textContent = points(entry.score);
    Object.assign(tr.insertCell(), { className: "daily-time", textContent: formatTime(entry.ms) });
    const outcome = tr.insertCell();
    outcome.textContent = entry.outcome ? t(`outcome.${entry.outcome}`) : t("daily.playing");
    if (data.over && entry.game_id && entry.outcome) { // the games are shown once the day is over
      outcome.append(" ", el("a", { className: "daily-replay", textContent: t("duel.replay"),
        href: `/match?${new URLSearchParams({ daily: `${game}/${data.day}/${entry.game_id}` })}` }));
    }
  }
  if (!data.entries.length) {
    const cell = rows.insertRow().insertCell();
    cell.colSpan = 5;
    cell.textContent = t("daily.empty");
  }
  const days = [data.today, ...earlierDays(data.today, 7)];
  $("#daily-days").replaceChildren(...days.map((d, i) => {
    const link = el("a", { className: "nav-link", href: `/daily?game=${game}&day=${d}`,
      textContent: i === 0 ? t("daily.today") : d });
    if (d === data.day) link.setAttribute("aria-current", "page");
    link.addEventListener("click", (e) => {
      e.preventDefault();
      day = i === 0 ? null : d;
      message = "";
      history.replaceState(null, "", address());
      render();
    });
    return link;
  }));
  await renderMine();
}

/** The signed-in player's streaks and a month of their deals of the day: what the server sends, nothing more. */
async function renderMine() {
  const box = $("#daily-mine");
  if (!user) {
    box.hidden = true;
    return;
  }
  const key = month || "";
  if (!mine.has(key)) {
    const answer = await getJSON(`/api/daily/mine${month ? `?month=${month}` : ""}`, { cache: "no-store" });
    if (!answer) {
      box.hidden = true;
      return;
    }
    mine.set(key, answer);
  }
  const data = mine.get(key);
  box.hidden = false;
  $("#daily-streak").textContent = t(`daily.streak.${data.streak === 1 ? "one" : "many"}`, { n: data.streak });
  $("#daily-best").textContent = t(`daily.best_streak.${data.best_streak === 1 ? "one" : "many"}`,
    { n: data.best_streak });
  const [year, mon] = data.month.split("-").map(Number);
  const first = Date.UTC(year, mon - 1, 1);
  $("#cal-month").textContent = new Intl.DateTimeFormat(lang(), { month: "long", year: "numeric", timeZone: "UTC" })
    .format(first);
  const weekday = (style) => new Intl.DateTimeFormat(lang(), { weekday: style, timeZone: "UTC" });
  $("#cal-weekdays").replaceChildren(...Array.from({ length: 7 }, (_, i) => { // Monday first (ISO)
    const date = Date.UTC(2024, 0, 1 + i);
    return el("th", { scope: "col", abbr: weekday("long").format(date), textContent: weekday("narrow").format(date) });
  }));
  const played = new Map(data.days.map((d) => [d.day, d.games]));
  const length = new Date(Date.UTC(year, mon, 0)).getUTCDate();
  const lead = (new Date(first).getUTCDay() + 6) % 7;
  const body = $("#cal-days");
  body.replaceChildren();
  let row = body.insertRow();
  for (let i = 0; i < lead; i++) row.insertCell();
  for (let n = 1; n <= length; n++) {
    if (row.cells.length === 7) row = body.insertRow();
    const d = `${data.month}-${String(n).padStart(2, "0")}`;
    const cell = row.insertCell();
    if (d === data.today) cell.className = "today";
    const games = played.get(d);
    if (!games) {
      cell.textContent = String(n);
      continue;
    }
    const ids = Object.keys(games);
    const won = ids.filter((id) => games[id] === "won");
    const said = ids.map((id) => `${gameName(id)}: ${games[id] === "won" ? t("daily.won")
      : games[id] ? t(`outcome.${games[id]}`).replace(/!$/, "") : t("daily.playing")}`);
    cell.append(el("a", { className: won.length ? "won" : "played", textContent: String(n), title: said.join(" · "),
      href: `/daily?${new URLSearchParams({ game: won[0] || ids[0], day: d })}` }));
    cell.firstChild.setAttribute("aria-label", `${d}: ${said.join(", ")}`);
  }
  while (row.cells.length < 7) row.insertCell();
  $("#cal-next").disabled = data.month >= data.today.slice(0, 7);
}

function turnMonth(step) {
  const shown = mine.get(month || "");
  if (!shown) return;
  const [year, mon] = shown.month.split("-").map(Number);
  const next = new Date(Date.UTC(year, mon - 1 + step, 1)).toISOString().slice(0, 7);
  month = next === shown.today.slice(0, 7) ? null : next;
  renderMine();
}

async function main() {
  $("#cal-prev").addEventListener("click", () => turnMonth(-1));
  $("#cal-next").addEventListener("click", () => turnMonth(1));
  user = await openPage();
  onLang(render);
  render();
}

main();
