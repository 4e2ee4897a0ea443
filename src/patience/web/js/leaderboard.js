// The leaderboard of each duel game: established ratings first, provisional ones (marked ?) after.

import { el, gameName, noAnswer, openPage } from "./arena.js";
import { onLang, playerName } from "./i18n.js";
import { $, applyText, getJSON, pageNotice } from "./ui.js";

const GAMES = ["reloaded", "faecher", "teppich"];
const params = new URLSearchParams(location.search);
let game = GAMES.includes(params.get("game")) ? params.get("game") : "reloaded";
// an address naming no game with a leaderboard: said, over the first game's board
const unknown = params.has("game") && !GAMES.includes(params.get("game")) ? params.get("game").slice(0, 40) : null;

async function render() {
  applyText();
  $("#tabs").replaceChildren(...GAMES.map((id) => {
    const tab = el("a", { className: "tab", href: `/leaderboard?game=${id}`, textContent: gameName(id) });
    tab.setAttribute("role", "tab");
    tab.setAttribute("aria-selected", String(id === game));
    tab.addEventListener("click", (e) => {
      e.preventDefault();
      game = id;
      pageNotice($("main"), null);
      history.replaceState(null, "", `/leaderboard?game=${id}`);
      render();
    });
    return tab;
  }));
  const data = await getJSON(`/api/leaderboard?game=${game}`);
  noAnswer(data ? null : "offline.failed"); // the board as it was, and why
  if (!data) return;
  const rows = $("#rows");
  rows.replaceChildren();
  data.players.forEach((p, i) => {
    const tr = rows.insertRow();
    tr.insertCell().textContent = String(i + 1);
    tr.insertCell().append(el("a", { href: `/profile?u=${encodeURIComponent(p.id)}`, textContent: playerName(p.name) }));
    tr.insertCell().textContent = `${p.rating}${p.provisional ? "?" : ""}`;
    tr.insertCell().textContent = String(p.matches);
  });
  if (!data.players.length) {
    const cell = rows.insertRow().insertCell();
    cell.colSpan = 4;
    cell.dataset.t = "board.empty";
    applyText(rows);
  }
}

async function main() {
  await openPage();
  if (unknown !== null) pageNotice($("main"), "lost.leaderboard", { game: unknown });
  onLang(render);
  render();
}

main();
