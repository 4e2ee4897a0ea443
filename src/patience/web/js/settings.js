// The table's settings (one section of the play and duel pages' menus): sounds, theme, table colour, card
// size and hand, kept in this browser. prefs.js puts the kept look onto <html> before the first paint; a change
// here puts it there too and tells the board ("patience:look") to lay the piles out again. And the alert of a
// background tab when an opponent is found: a sound, the tab's title, a notification if the player allowed it.

import { sound, soundOn } from "./sound.js";

const CHOICES = {
  theme: ["system", "light", "dark"],
  felt: ["green", "blue", "red", "grey"],
  cards: ["normal", "small", "large"],
  hand: ["right", "left"],
};

/** The setting ``name``: set it when ``value`` is given; returns it (on <html data-NAME> too). */
export function setting(name, value) {
  const allowed = CHOICES[name];
  if (value !== undefined && allowed.includes(value)) {
    try {
      localStorage.setItem(`patience.${name}`, value);
    } catch {
      // kept for this page only
    }
    document.documentElement.dataset[name] = value;
    window.dispatchEvent(new Event("patience:look")); // prefs.js works out the dark look (and the bar's colour)
  }
  const now = document.documentElement.dataset[name];
  return allowed.includes(now) ? now : allowed[0];
}

function el(tag, { dataset = {}, ...props } = {}, ...children) {
  const node = Object.assign(document.createElement(tag), props);
  for (const [key, value] of Object.entries(dataset)) node.dataset[key] = value;
  node.append(...children);
  return node;
}

/** The "Settings" section (its words follow the page's language through data-t). */
export function settingsSection() {
  const box = el("section", { className: "settings" });
  box.setAttribute("aria-labelledby", "settings-title");
  box.append(el("h3", { id: "settings-title", dataset: { t: "settings.title" } }));
  const check = el("input", { type: "checkbox", id: "sound" });
  check.checked = soundOn();
  check.addEventListener("change", () => {
    soundOn(check.checked);
    if (check.checked) sound("move"); // the switch is heard at once (and the audio starts on this gesture)
  });
  box.append(el("label", { className: "row check" }, check, " ", el("span", { dataset: { t: "settings.sound" } })));
  for (const [name, values] of Object.entries(CHOICES)) {
    const select = el("select", { id: `set-${name}` });
    for (const value of values) select.append(el("option", { value, dataset: { t: `settings.${name}_${value}` } }));
    select.value = setting(name);
    select.addEventListener("change", () => setting(name, select.value));
    box.append(el("div", { className: "row setting" },
      el("label", { htmlFor: `set-${name}`, dataset: { t: `settings.${name}` } }), select));
  }
  return box;
}

// -- a background tab's alert --------------------------------------------------------------------

const MARK = "● ";
let marked = false;

/** Tell a player whose tab is in the background that something needs them: a sound (even with sounds off:
 * they asked to play), "● " before the tab's title until they come back, and a notification if allowed. */
export function attention(title, body) {
  if (!document.hidden) return;
  sound("found", true);
  if (!marked) {
    marked = true;
    document.title = MARK + document.title;
    const back = () => {
      if (document.hidden) return;
      document.removeEventListener("visibilitychange", back);
      marked = false;
      if (document.title.startsWith(MARK)) document.title = document.title.slice(MARK.length);
    };
    document.addEventListener("visibilitychange", back);
  }
  if (!("Notification" in window) || Notification.permission !== "granted" || !notifyWanted()) return;
  const options = { body, icon: "/static/icons/icon-192.png", tag: "patience-found" };
  try {
    const note = new Notification(title, options);
    note.onclick = () => {
      window.focus();
      note.close();
    };
  } catch {
    // where only a service worker may show one (Chrome on Android)
    navigator.serviceWorker?.ready.then((reg) => reg.showNotification(title, options)).catch(() => {});
  }
}

/** The "tell me when an opponent is found" switch: on asks for the browser's permission (on this click). */
export function notifyToggle() {
  const input = el("input", { type: "checkbox", id: "notify" });
  const label = el("label", { className: "row check notify-row" }, input, " ", el("span", { dataset: { t: "duel.notify" } }));
  if (!("Notification" in window)) {
    label.hidden = true;
    return label;
  }
  input.checked = notifyWanted() && Notification.permission === "granted";
  input.addEventListener("change", async () => {
    let on = input.checked;
    if (on && Notification.permission !== "granted") on = (await Notification.requestPermission()) === "granted";
    input.checked = on;
    try {
      localStorage.setItem("patience.notify", on ? "1" : "0");
    } catch {
      // not kept
    }
  });
  return label;
}

/** Whether the player wants notifications (once the browser allows them): yes unless switched off here. */
export function notifyWanted() {
  try {
    return localStorage.getItem("patience.notify") !== "0";
  } catch {
    return true;
  }
}
