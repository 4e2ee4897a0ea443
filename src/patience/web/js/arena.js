// Pieces the arena's pages share: who is signed in, the navigation, names of games and duel
// formats, posting a form with its CSRF token.

import { lang, setLang, t } from "./i18n.js";
import { applyText, askJSON, getJSON, languageSwitch, pageNotice } from "./ui.js";

let me = null;
let games = null;

/** {user: {id, login, name} | null, csrf} of this browser; rejects when the server did not say. */
export async function fetchMe(fresh = false) {
  if (me && !fresh) return me;
  const answer = await getJSON("/api/me", { credentials: "same-origin", cache: "no-store" });
  if (!answer) throw new Error("no answer from /api/me");
  me = answer;
  return me;
}

/** The games' names in every language, from the server; rejects when the server did not say. */
export async function fetchGames() {
  if (!games) {
    const list = await getJSON("/api/games");
    if (!list) throw new Error("no answer from /api/games");
    games = Object.fromEntries(list.games.map((g) => [g.id, g]));
  }
  return games;
}

/** The page's notice that the server did not answer (``key``: offline.gone, offline.failed; null: none). */
export function noAnswer(key) {
  const where = document.querySelector(".page-body:not([hidden])") || document.querySelector("main") || document.body;
  pageNotice(where, key, {}, "no-answer");
}

export function gameName(id) {
  const game = games && games[id];
  return game ? game.names[lang()] || game.names.en : id;
}

/** "Solitaire Reloaded · 5 min", "The Fan (Der Fächer) · With undo · 10 min" for "GAME/VARIANT/SECONDS". */
export function formatName(key) {
  const [game, variant, seconds] = key.split("/");
  const names = t(`variants.${game}`);
  const parts = [gameName(game)];
  if (variant !== "standard" && names && typeof names === "object" && names[variant]) parts.push(names[variant]);
  parts.push(t("duel.minutes", { n: Math.round(Number(seconds) / 60) }));
  return parts.join(" · ");
}

/** What every arena page does first: the language of `?lang=`, who is signed in and the games'
 * names, the navigation. Resolves to the signed-in user or null. */
export async function openPage() {
  const chosen = new URLSearchParams(location.search).get("lang");
  if (chosen) setLang(chosen);
  applyText(); // the page's own words (a button's name, say) at once, not after the server's first answer
  let who = null;
  // no answer (the server away): said, and asked again by itself until the server answers, as the offline page does
  for (let wait = 1000; !who; wait = Math.min(5000, wait * 1.5)) {
    try {
      [who] = await Promise.all([fetchMe(), fetchGames()]);
    } catch {
      noAnswer("offline.gone");
      await new Promise((ok) => setTimeout(ok, wait));
    }
  }
  noAnswer(null);
  navBar(document.querySelector("#nav"), who.user);
  showUnseen(who.playnow_unseen || 0);
  return who.user;
}

/** Links between the pages (and the language switch). */
export function navBar(container, user) {
  const links = [["/", "nav.games"], ["/daily", "nav.daily"], ["/duel", "nav.duel"], ["/tournament", "nav.tournaments"],
    ["/leaderboard", "nav.leaderboard"],
    ["/matches", "nav.matches"], ...(user ? [["/playnow", "nav.playnow"]] : []),
    user ? ["/profile", "nav.profile"] : ["/account", "nav.account"]];
  container.replaceChildren(...links.map(([href, key]) => {
    const a = document.createElement("a");
    a.href = href;
    a.className = "nav-link";
    const words = el("span", { textContent: t(key) });
    words.dataset.t = key;
    a.append(words);
    if (href === "/playnow") { // Play now's results that came in unseen
      a.id = "nav-playnow";
      a.append(el("span", { className: "nav-badge", id: "playnow-badge", hidden: true }));
    }
    if (location.pathname === href) a.setAttribute("aria-current", "page");
    return a;
  }));
  const langs = document.createElement("div");
  langs.className = "langs";
  container.append(langs);
  languageSwitch(langs);
}

/** The badge of Play now's results that came in unseen (the nav's "Your games"): ``n`` of them. */
export function showUnseen(n) {
  const badge = document.querySelector("#playnow-badge");
  if (!badge) return;
  badge.hidden = !(n > 0);
  badge.textContent = n > 0 ? String(n) : "";
  badge.title = n > 0 ? t("playnow.new_badge", { n }) : "";
  badge.setAttribute("aria-label", badge.title);
}

/** A result of Play now came in (the arena socket's "playnow" message): the badge as the server counts it. */
export async function refreshUnseen() {
  try {
    const who = await fetchMe(true);
    showUnseen(who.playnow_unseen || 0);
  } catch {
    // no answer: the badge as it was, until the next result
  }
}

/** Press Play now on the pool ``format`` ("GAME/VARIANT/SECONDS"): on the server's answer, to the game's
 * table (its cards at once); else resolves to the words of why not. */
export async function playNow(format) {
  const answer = await postForm(`/api/playnow/${format}`, {});
  if (answer.status === 200 && answer.game_id) {
    try { // what the table shows above the game (the opponent's rating is only in this answer)
      sessionStorage.setItem(`patience.playnow.${answer.game_id}`, JSON.stringify(answer));
    } catch {
      // the table asks the server for the rest
    }
    const to = new URLSearchParams({ game: answer.game, id: answer.game_id });
    if (!answer.again) to.set("now", "1"); // a new game: who it is against is shown from this answer
    location.href = `/play?${to}`;
    return null;
  }
  const known = ["too_many", "elsewhere", "sign_in", "bad_format"].includes(answer.error);
  return t(`playnow.err.${known ? answer.error : "failed"}`);
}

/** Post a form the way the pages do (URL-encoded, with the CSRF token); resolves to the JSON answer, with
 * ``status`` 0 and the error "network" when the server did not answer (never a rejection). */
export async function postForm(path, fields) {
  let csrf = "";
  try {
    ({ csrf } = await fetchMe());
  } catch {
    return { status: 0, ok: false, error: "network" };
  }
  return askJSON(path, {
    method: "POST", body: new URLSearchParams({ ...fields, csrf }), credentials: "same-origin",
    headers: { accept: "application/json", "content-type": "application/x-www-form-urlencoded" },
  });
}

/** SHA-256 of a text, in hex (the browser's own crypto). */
export async function sha256(text) {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return Array.from(new Uint8Array(digest), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** The text a duel's commitment is the SHA-256 of (docs/protocol.md, Duels). */
export function commitmentText(game, options, seed, nonce) {
  const sorted = Object.keys(options).sort().map((k) => `${JSON.stringify(k)}:${JSON.stringify(options[k])}`);
  const opts = `{${sorted.join(",")}}`;
  // a secret deal key (version 2); a match of the first version had a game number and a nonce
  return nonce ? `patience-duel-v1|${game}|${opts}|${seed}|${nonce}` : `patience-duel-v2|${game}|${opts}|${seed}`;
}

export function el(tag, props = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  node.append(...children);
  return node;
}
