// Small pieces both pages use: text in the page's language, the language switch, toasts, dialogs.

import { LANGS, lang, onLang, setLang, t } from "./i18n.js";

export const $ = (selector, root = document) => root.querySelector(selector);

/** Fill every [data-t] (text), [data-t-label] (aria-label) and [data-t-title] from the current language, and
 * on the whole document the tab's title (<title data-t-doc="KEY">; a page may set a more precise one after). */
export function applyText(root = document) {
  document.documentElement.lang = lang();
  const title = root === document ? document.querySelector("title[data-t-doc]") : null;
  if (title) document.title = `${document.title.startsWith("● ") ? "● " : ""}${t(title.dataset.tDoc)} · Patience Arena`;
  for (const el of root.querySelectorAll("[data-t]")) el.textContent = t(el.dataset.t, JSON.parse(el.dataset.p || "{}"));
  for (const el of root.querySelectorAll("[data-t-label]")) el.setAttribute("aria-label", t(el.dataset.tLabel));
  for (const el of root.querySelectorAll("[data-t-title]")) el.title = t(el.dataset.tTitle);
  for (const el of root.querySelectorAll("[data-t-placeholder]")) el.placeholder = t(el.dataset.tPlaceholder);
}

/** A lasting notice at the top of ``container`` (an address that leads nowhere, say): the text of ``key``
 * in the page's language (it follows a language switch); ``key`` null takes it away. A notice of another
 * ``kind`` (its class) is a box of its own beside it. */
export function pageNotice(container, key, params = {}, kind = "page-notice") {
  let box = container.querySelector(`:scope > .${kind}`);
  if (!key) {
    if (box) box.remove();
    return;
  }
  if (!box) {
    box = document.createElement("p");
    box.className = `notice bad ${kind}`;
    box.setAttribute("role", "alert");
    container.prepend(box);
  }
  box.dataset.t = key;
  box.dataset.p = JSON.stringify(params);
  box.textContent = t(key, params);
}

/** Buttons DE · EN · IT that switch the language (and keep the choice). */
export function languageSwitch(container) {
  container.replaceChildren();
  container.setAttribute("role", "group");
  container.setAttribute("aria-label", "Language / Sprache / Lingua");
  for (const [code, name] of Object.entries(LANGS)) {
    const button = document.createElement("button");
    button.type = "button";
    button.className = "lang";
    button.dataset.lang = code;
    button.textContent = code.toUpperCase();
    button.title = name;
    button.setAttribute("aria-label", name);
    button.addEventListener("click", () => setLang(code));
    container.append(button);
  }
  const mark = () => {
    for (const b of container.querySelectorAll("button")) b.setAttribute("aria-pressed", String(b.dataset.lang === lang()));
  };
  mark();
  onLang(mark);
}

let toastTimer = null;

export function toast(text, kind = "") {
  const box = $("#toast");
  if (!box) return;
  box.textContent = text;
  box.className = `toast ${kind}`;
  box.hidden = false;
  // over the toolbar, never over a card: where a card would be covered, it goes to the top of the screen
  if (coversCard(box)) box.classList.add("top");
  clearTimeout(toastTimer);
  toastTimer = setTimeout(() => (box.hidden = true), kind === "bad" ? 3200 : 2400);
}

function coversCard(box) {
  const r = box.getBoundingClientRect();
  for (const card of document.querySelectorAll(".card")) {
    if (card.hidden) continue;
    const c = card.getBoundingClientRect();
    if (c.left < r.right && c.right > r.left && c.top < r.bottom && c.bottom > r.top) return true;
  }
  return false;
}

/** Ask a yes/no question in a dialog; resolves to true for yes. */
export function confirmDialog(question) {
  const dialog = $("#confirm");
  $("#confirm-text", dialog).textContent = question;
  return new Promise((resolve) => {
    const done = (answer) => {
      dialog.close();
      resolve(answer);
    };
    $("#confirm-yes", dialog).onclick = () => done(true);
    $("#confirm-no", dialog).onclick = () => done(false);
    dialog.oncancel = () => resolve(false);
    dialog.showModal();
  });
}

export function formatTime(ms) {
  const s = Math.max(0, Math.floor(ms / 1000));
  const m = Math.floor(s / 60);
  return `${m}:${String(s % 60).padStart(2, "0")}`;
}

/** A score as the pages write it: a true minus sign (−50), no plus. */
export function points(value) {
  return value < 0 ? `−${-value}` : String(value);
}

export function signed(points) {
  return points > 0 ? `+${points}` : points < 0 ? `−${-points}` : "0";
}

/** A share in the page's language: 33.3 % in English, 33,3 % in German and Italian. */
export function percent(value) {
  return `${new Intl.NumberFormat(lang(), { maximumFractionDigits: 1 }).format(value)} %`;
}

/** One game's statistics as small labelled figures (or "no games yet"): those of ``variant`` when
 * given (the server keeps them per variant, "custom" for other options). Wins, the rate, the best
 * score and the streaks are of games played without a hint; wins with one are counted apart. */
export function renderStats(container, all, variant = null) {
  container.replaceChildren();
  const figures = variant ? all && all.variants && all.variants[variant] : all;
  if (!figures || !figures.played) {
    container.textContent = t("no_stats");
    return;
  }
  const items = [
    ["played", figures.played], ["won", figures.won], ["win_pct", percent(figures.win_percent)],
    ["best", figures.best == null ? "–" : points(figures.best)], ["streak", figures.streak], ["best_streak", figures.best_streak],
    ["won_hinted", figures.won_hinted || 0],
  ];
  const list = document.createElement("dl");
  list.className = "figs";
  for (const [key, value] of items) {
    const item = document.createElement("div");
    const term = document.createElement("dt");
    term.textContent = t(key);
    const number = document.createElement("dd");
    number.textContent = String(value);
    item.append(term, number);
    list.append(item);
  }
  container.append(list);
}

/** A request of the page's (``fetch``'s arguments): the server's answer, or null when none came (the server
 * or the network away). Never a rejection: each caller says what a missing answer means where it matters. */
export async function request(path, init = {}) {
  try {
    return await fetch(path, init);
  } catch {
    return null;
  }
}

/** The JSON of a GET's answer, or null when there is none to show: no answer, an error status, no JSON. */
export async function getJSON(path, init = {}) {
  const response = await request(path, init);
  if (!response || !response.ok) return null;
  try {
    return await response.json();
  } catch {
    return null;
  }
}

/** The answer to a request as the pages read it, error or not: its JSON with its ``status`` (the error "server"
 * when it has no JSON), or status 0 and the error "network" when no answer came. Never a rejection. */
export async function askJSON(path, init = {}) {
  const response = await request(path, init);
  if (!response) return { status: 0, ok: false, error: "network" };
  let data = {};
  try {
    data = await response.json();
  } catch {
    data = { ok: false, error: "server" };
  }
  return { status: response.status, ...data };
}

export function fetchStats() {
  return getJSON("/api/stats", { credentials: "same-origin" });
}

/** A yes/no choice kept in localStorage under ``key``: set it when ``on`` is given; returns it. */
function storedChoice(key, on) {
  if (on !== undefined) {
    try {
      localStorage.setItem(key, on ? "1" : "0");
    } catch {
      // kept for this page only
    }
  }
  try {
    return localStorage.getItem(key) === "1";
  } catch {
    return !!on;
  }
}

export function fourColour(on) {
  const value = storedChoice("patience.four", on);
  document.body.classList.toggle("four", value);
  return value;
}

/** Auto-move (off unless chosen): the server sends safe cards to the foundations after each move. */
export function autoMove(on) {
  return storedChoice("patience.auto", on);
}

export const BACKS = ["blue", "red", "green"];

/** The card back chosen (kept by the browser): set it when ``value`` is given; returns it. */
export function cardBack(value) {
  if (value !== undefined && BACKS.includes(value)) {
    try {
      localStorage.setItem("patience.back", value);
    } catch {
      // kept for this page only
    }
  }
  let back = value;
  try {
    back = localStorage.getItem("patience.back") || back;
  } catch {
    // storage off: the value given, or the default
  }
  if (!BACKS.includes(back)) back = BACKS[0];
  for (const b of BACKS) document.body.classList.toggle(`back-${b}`, b === back);
  return back;
}

/** "Winnable deals only": a new game without a game number asks the server for a proved-winnable one. */
export function winnableOnly(on) {
  return storedChoice("patience.winnable", on);
}

/** The undo button as the status says: hidden in a game without undo, "Undo (0 of 3)" where the undos
 * in store are limited (out of the most a store holds, never a bare "(0)" that reads as "no undo"). */
export function showUndo(status) {
  const undo = $("#undo");
  undo.hidden = status.undos_most === 0;
  undo.disabled = !status.can_undo;
  const most = status.undos_most;
  const store = status.undos_left == null ? null : { n: status.undos_left, max: most > 0 ? most : status.undos_left };
  $("#undos-left").textContent = store ? t("undos_of", store) : "";
  undo.title = store ? t("undo_store", store) : t("undo");
}
