// "Your games" of Play now: the games going on, those waiting for the other player, the results (each with
// its replay, where the deal key opens the commitment) and the matches nobody took. The page shows what
// the server sends and marks the results seen once shown (new ones stay marked on this page). It is live:
// a result that comes in while it is open is shown at once (the arena socket's "playnow" message, as the
// duel page's badge hears it).

import { el, formatName, openPage, postForm, showUnseen } from "./arena.js";
import { lang, onLang, playerName, t } from "./i18n.js";
import { Liveness } from "./liveness.js";
import { randomId } from "./net.js";
import { $, applyText, points } from "./ui.js";

const SEEN_AFTER_MS = 2000; // a result that comes in while the page is open counts as seen after this long

const DAY_MS = 86400000;
let data = null;
let fresh = new Set(); // the ids of results new when the page was opened

/** Which group a match of the list goes in. */
function groupOf(g) {
  if (g.state === "done") return "finished";
  if (g.state === "expired") return "expired";
  if (!g.mine || g.mine.outcome == null) return "going";
  return "waiting";
}

function dateText(ms) {
  return ms ? new Date(ms).toLocaleDateString(lang(), { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" })
    : "";
}

function item(g) {
  const li = el("li", { className: "pn-item" });
  li.dataset.id = g.id;
  li.dataset.state = g.state;
  if (fresh.has(g.id)) li.classList.add("is-new");
  const head = el("p", { className: "pn-head" }, el("strong", { className: "pn-format", textContent: formatName(g.format) }));
  if (fresh.has(g.id)) head.append(" ", el("span", { className: "pn-new", textContent: t("playnow.new") }));
  const who = g.role === "host" ? t("playnow.you_first") : "";
  const them = g.opponent ? t("playnow.against", { name: playerName(g.opponent.name) }) : "";
  const facts = [who, them, dateText(g.made_ms)].filter(Boolean).join(" · ");
  const lines = [head, el("p", { className: "pn-facts small", textContent: facts })];
  const status = el("p", { className: "pn-status" });
  let action = null;
  const group = groupOf(g);
  if (group === "going") {
    action = el("a", { className: "btn primary pn-go", textContent: t("playnow.go_on"),
      href: `/play?${new URLSearchParams({ game: g.game, id: g.game_id })}` });
  } else if (group === "waiting") {
    const mine = t("playnow.your_score", { score: points(g.mine.score) });
    let state;
    if (g.state === "taken" && g.opponent) {
      state = t("playnow.taken", { name: playerName(g.opponent.name) });
    } else {
      const days = g.expires_ms ? Math.floor((g.expires_ms - Date.now()) / DAY_MS) : null;
      const expires = days == null ? "" : days >= 1 ? t("playnow.expires", { n: days }) : t("playnow.expires_soon");
      state = [t("playnow.open"), expires].filter(Boolean).join(", ");
    }
    status.textContent = `${state} · ${mine}`;
  } else if (group === "finished" && g.result) {
    const r = g.result;
    const word = r.winner === "you" ? "won" : r.winner === "them" ? "lost" : "draw";
    li.dataset.result = word;
    status.append(el("strong", { className: "pn-result", textContent: t(`playnow.${word}`) }), " ",
      el("span", { className: "pn-finals", textContent: t("playnow.finals",
        { you: points(r.finals.you), name: g.opponent ? playerName(g.opponent.name) : "?", them: points(r.finals.them) }) }));
    action = el("a", { className: "btn solid pn-replay", textContent: t("playnow.replay"),
      href: `/match?id=${encodeURIComponent(r.match)}` });
  } else if (group === "expired") {
    status.textContent = t("playnow.expired_text");
    if (g.mine && g.mine.score != null) status.textContent += ` ${t("playnow.your_score", { score: points(g.mine.score) })}`;
  }
  if (status.childNodes.length) lines.push(status);
  const body = el("div", { className: "pn-body" }, ...lines);
  li.append(body);
  if (action) li.append(action);
  return li;
}

function render() {
  applyText();
  if (!data) return;
  const groups = { going: [], waiting: [], finished: [], expired: [] };
  for (const g of data.games) groups[groupOf(g)].push(g);
  for (const [name, list] of Object.entries(groups)) {
    const box = $(`#pn-${name}`);
    box.hidden = list.length === 0;
    box.querySelector(".pn-list").replaceChildren(...list.map(item));
  }
  $("#pn-empty").hidden = data.games.length > 0;
  $("#pn-lobby").hidden = data.games.length === 0;
}

async function load(live = false) {
  let answer = null;
  try {
    const response = await fetch("/api/playnow", { cache: "no-store", credentials: "same-origin" });
    answer = await response.json();
  } catch {
    answer = { error: "failed" };
  }
  if (answer.error === "sign_in") {
    $("#pn-signin").hidden = false;
    return;
  }
  if (answer.error || !Array.isArray(answer.games)) {
    $("#pn-msg").hidden = false;
    $("#pn-msg").dataset.t = "playnow.failed";
    $("#pn-msg").textContent = t("playnow.failed");
    return;
  }
  data = answer;
  const unseen = data.games.filter((g) => !g.seen && (g.state === "done" || g.state === "expired")).map((g) => g.id);
  fresh = new Set([...fresh, ...unseen]);
  render();
  if (data.unseen > 0 || unseen.length) { // shown: seen (they stay marked new on this page)
    if (live) await new Promise((ok) => setTimeout(ok, SEEN_AFTER_MS)); // the player's other pages hear of it first
    const said = await postForm("/api/playnow/seen", {});
    if (said.status === 200) showUnseen(0);
  }
}

/** The arena socket: a result of Play now that comes in is loaded and shown; after a lost connection, the
 * list is loaded again (a result may have come meanwhile). */
function listen() {
  const cid = randomId();
  let retry = 0;
  let ws = null;
  const liveness = new Liveness(() => send("ping"), () => lost(ws));
  const send = (type) => ws && ws.readyState === WebSocket.OPEN && ws.send(JSON.stringify({ t: type, d: { cid } }));
  const open = (again) => {
    ws = new WebSocket(`${location.protocol === "https:" ? "wss:" : "ws:"}//${location.host}/ws`);
    const mine = ws;
    ws.onopen = () => {
      liveness.heardNow();
      send("lobby"); // a page of the arena: told of its player's results
      if (again) load(true);
    };
    ws.onmessage = (e) => {
      liveness.heardNow();
      retry = 0;
      let msg = {};
      try {
        msg = JSON.parse(e.data);
      } catch {
        return;
      }
      if (msg.t === "playnow") load(true);
    };
    ws.onclose = () => lost(mine);
  };
  const lost = (gone) => {
    if (!gone || gone !== ws) return;
    ws = null;
    gone.onclose = null;
    try {
      gone.close();
    } catch {
      // already gone
    }
    setTimeout(() => open(true), Math.min(5000, 300 * 2 ** retry++));
  };
  open(false);
  liveness.start();
}

async function main() {
  const user = await openPage();
  onLang(render);
  applyText();
  if (!user) {
    $("#pn-signin").hidden = false;
    return;
  }
  listen();
  await load();
}

main();
