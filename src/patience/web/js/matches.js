// The match history, rendered by the server: this script only puts its words into the page's
// language (names of games and formats, closed accounts' names, outcomes, dates) and fills in the navigation.

import { formatName, gameName, openPage } from "./arena.js";
import { lang, onLang, playerName, t } from "./i18n.js";
import { applyText } from "./ui.js";

function withParams(node, key) {
  let values = {};
  try {
    values = JSON.parse(node.dataset.p || "{}");
  } catch {
    values = {};
  }
  const text = t(key, values);
  if (text !== key) node.textContent = text;
}

function render() {
  applyText();
  for (const node of document.querySelectorAll("[data-p][data-t]")) withParams(node, node.dataset.t);
  for (const node of document.querySelectorAll("[data-error]")) withParams(node, `matches.err.${node.dataset.error}`);
  for (const node of document.querySelectorAll("[data-format]")) node.textContent = formatName(node.dataset.format);
  for (const node of document.querySelectorAll("option[data-game]")) node.textContent = gameName(node.dataset.game);
  for (const node of document.querySelectorAll("[data-player]")) node.textContent = playerName(node.dataset.player);
  for (const node of document.querySelectorAll("[data-outcome]")) node.textContent = t(`outcome.${node.dataset.outcome}`);
  for (const node of document.querySelectorAll("time[datetime]")) {
    node.textContent = new Date(node.getAttribute("datetime")).toLocaleString(lang(), { dateStyle: "medium", timeStyle: "short" });
  }
  document.title = `${t("matches.title")} · Patience Arena`;
}

async function main() {
  await openPage();
  onLang(render);
  render();
}

main();
