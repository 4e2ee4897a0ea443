// The start page: pick a game and a variant (and a game number if you like), see your statistics.

import { faceSvg, installDefs } from "./cards.js";
import { lang, onLang, rulesOf, t } from "./i18n.js";
import { $, applyText, fetchStats, getJSON, languageSwitch, pageNotice, renderStats, winnableOnly } from "./ui.js";

const ORDER = ["teppich", "reloaded", "faecher"];
const ART = {
  teppich: ["7H", "QS", "3D", "10C", "AH", "5S"],
  reloaded: ["KS", "QH", "JC", "10D", "9S"],
  faecher: ["2C", "9H", "JD", "KS", "AH"],
};

let games = [];
let stats = null;

function tile(game) {
  const el = document.createElement("article");
  el.className = "game-tile";
  el.dataset.game = game.id;
  const art = ART[game.id].map((c, i) => `<span class="mini s-${c.slice(-1)}" style="--i:${i}">${faceSvg(c)}</span>`);
  el.innerHTML = `
    <div class="tile-art art-${game.id}" aria-hidden="true">${art.join("")}</div>
    <h2 class="tile-name"></h2>
    <p class="tile-aka"></p>
    <ul class="rules"></ul>
    <p class="tile-odds"></p>
    <form class="tile-form">
      <label><span class="label variant-label"></span><select name="variant"></select></label>
      <label><span class="label seed-label"></span>
        <input name="seed" inputmode="numeric" pattern="[0-9]*" maxlength="19" autocomplete="off"></label>
      <label class="check"><input type="checkbox" name="winnable"> <span class="winnable-label"></span></label>
      <button type="submit" class="btn primary play-btn"></button>
    </form>
    <a class="btn daily-link"></a>
    <div class="tile-stats"></div>`;
  const form = $(".tile-form", el);
  form.variant.addEventListener("change", () => {
    showRules(el, game);
    showOdds(el, game);
    showStats(el, game);
  });
  // one choice for every game, kept by the browser: the game page asks for a winnable deal with it
  form.winnable.checked = winnableOnly();
  form.winnable.addEventListener("change", (e) => {
    const on = winnableOnly(e.target.checked);
    for (const box of document.querySelectorAll(".tile-form input[name=winnable]")) box.checked = on;
  });
  form.addEventListener("submit", (e) => {
    e.preventDefault();
    const query = new URLSearchParams({ game: game.id });
    const variant = form.variant.value;
    if (variant && variant !== Object.keys(game.variants)[0]) query.set("variant", variant);
    const seed = form.seed.value.trim();
    if (/^\d{1,19}$/.test(seed)) query.set("seed", seed);
    location.href = `/play?${query}`;
  });
  return el;
}

/** The player's figures for the chosen variant (the server keeps them per variant). */
function showStats(el, game) {
  const box = $(".tile-stats", el);
  const variant = $("select", el).value;
  const name = t(`variants.${game.id}`)[variant] || variant;
  box.replaceChildren();
  const title = Object.assign(document.createElement("h3"), { className: "stats-title",
    textContent: t("stats_of", { variant: name }) });
  const figures = document.createElement("div");
  renderStats(figures, stats && stats.stats[game.id], variant);
  box.append(title, figures);
}

/** The chosen variant's rules, as the texts say them. */
function showRules(el, game) {
  $(".rules", el).replaceChildren(...rulesOf(game.id, $("select", el).value).map((line) =>
    Object.assign(document.createElement("li"), { textContent: line })));
}

/** The chosen variant's published win rate (patience.solve.rates, the README's table): perfect play, every card seen. */
function showOdds(el, game) {
  const odds = $(".tile-odds", el);
  const rate = (game.rates || {})[$("select", el).value];
  odds.hidden = !rate;
  if (!rate) return;
  const percent = new Intl.NumberFormat(lang(), { maximumFractionDigits: rate.rate >= 0.99 ? 1 : 0 });
  const line = rate.one_in ? t("odds_one_in", { n: rate.one_in }) : t("odds_percent", { p: percent.format(100 * rate.rate) });
  odds.textContent = rate.play_matters ? line : `${line}: ${t("odds_luck")}`;
  odds.title = t("odds_title", { deals: rate.deals.toLocaleString(lang()) });
}

function fill() {
  applyText();
  for (const game of games) {
    const el = document.querySelector(`.game-tile[data-game="${game.id}"]`);
    if (!el) continue;
    const shown = game.names[lang()] || game.names.en;
    $(".tile-name", el).textContent = shown;
    // the game's own names (Teppich, Tappeto) stay in sight whatever the language
    const own = shown.includes(game.names.de) ? [] : [game.names.de, game.names.it].filter(
      (name, i, all) => name && !shown.includes(name) && all.indexOf(name) === i);
    $(".tile-aka", el).textContent = own.join(" · ");
    $(".variant-label", el).textContent = t("variant");
    $(".seed-label", el).textContent = t("game_no");
    $("input[name=seed]", el).placeholder = t("random");
    $(".winnable-label", el).textContent = t("winnable_only");
    $(".play-btn", el).textContent = t("play");
    Object.assign($(".daily-link", el), { href: `/daily?game=${game.id}`, textContent: t("daily.entry") });
    const select = $("select", el);
    const chosen = select.value;
    const names = t(`variants.${game.id}`);
    select.replaceChildren(...Object.keys(game.variants).map((v) => new Option(names[v] || v, v)));
    if (chosen) select.value = chosen;
    showRules(el, game);
    showOdds(el, game);
    showStats(el, game);
  }
  const unfinished = stats && stats.unfinished[0];
  $("#resume").hidden = !unfinished;
  if (unfinished) {
    const game = games.find((g) => g.id === unfinished.game);
    const name = game ? game.names[lang()] || game.names.en : unfinished.game;
    const moves = t(`n_moves.${unfinished.moves === 1 ? "one" : "many"}`, { n: unfinished.moves });
    $("#resume-line").textContent = t("unfinished_line", { game: name, seed: unfinished.seed, moves });
    $("#resume-link").href = `/play?${new URLSearchParams({ game: unfinished.game, seed: unfinished.seed, id: unfinished.id })}`;
  }
}

async function main() {
  installDefs();
  languageSwitch($("#langs"));
  onLang(fill);
  applyText();
  const [list, figures] = await Promise.all([getJSON("/api/games"), fetchStats()]);
  if (!list) { // no answer: said; the games come with the page's next load
    pageNotice($("main"), "offline.failed", {}, "no-answer");
    return;
  }
  games = ORDER.map((id) => list.games.find((g) => g.id === id)).filter(Boolean);
  stats = figures;
  $("#games").replaceChildren(...games.map(tile));
  fill();
}

main();
