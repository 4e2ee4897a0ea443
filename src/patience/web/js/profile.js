// A player's page: ratings per game with their history, duel and solo statistics, recent matches, the
// tournaments they played (their place and points, linking to the standings).

import { el, formatName, gameName, noAnswer, openPage } from "./arena.js";
import { lang, onLang, playerName, t } from "./i18n.js";
import { reportBox } from "./report.js";
import { $, applyText, points, request } from "./ui.js";

const params = new URLSearchParams(location.search);
let data = null;

function chart(points) {
  // a small line of the rating after each match (no library: an inline SVG)
  const w = 320;
  const h = 90;
  const values = points.map((p) => p.rating);
  const low = Math.min(...values) - 20;
  const high = Math.max(...values) + 20;
  const x = (i) => (points.length === 1 ? w / 2 : (i * (w - 10)) / (points.length - 1) + 5);
  const y = (v) => h - 5 - ((v - low) * (h - 10)) / (high - low);
  const line = points.map((p, i) => `${i ? "L" : "M"}${x(i).toFixed(1)},${y(p.rating).toFixed(1)}`).join(" ");
  const dots = points.map((p, i) => `<circle cx="${x(i).toFixed(1)}" cy="${y(p.rating).toFixed(1)}" r="3"/>`).join("");
  const svg = el("div", { className: "chart" });
  // said to a screen reader as the ratings in order
  const said = `${t("profile.history")}: ${values.join(", ")}`.replace(/[&<>"]/g, (c) => `&#${c.charCodeAt(0)};`);
  svg.innerHTML = `<svg viewBox="0 0 ${w} ${h}" role="img" aria-label="${said}"><path d="${line}" fill="none" stroke="currentColor" stroke-width="2"/>${dots}</svg>`;
  return svg;
}

/** A rating change as shown: one decimal, with its sign. */
function signed(x) {
  const r = Math.round(x * 10) / 10;
  return r > 0 ? `+${r}` : `${r}`;
}

function figures(pairs) {
  const list = el("dl", { className: "figs" });
  for (const [label, value] of pairs) list.append(el("div", {}, el("dt", { textContent: label }), el("dd", { textContent: String(value) })));
  return list;
}

function render() {
  applyText();
  if (!data) return;
  $("#player-name").textContent = playerName(data.user.name);
  $("#player-since").textContent = t("profile.since", { date: new Date(data.user.since_ms).toLocaleDateString(lang()) });
  const games = Object.keys(data.ratings);
  $("#ratings").replaceChildren(...(games.length ? games.map((g) => {
    const r = data.ratings[g];
    return el("div", { className: "rating-card" }, el("span", { className: "label", textContent: gameName(g) }),
      el("strong", { textContent: `${r.rating}${r.provisional ? "?" : ""}` }),
      el("span", { className: "small", textContent: `± ${r.deviation} · ${t("profile.matches")} ${r.matches}` }),
      ...(r.held ? [el("span", { className: "small", textContent: t("profile.held", { points: signed(r.held) }) })] : []));
  }) : [el("p", { className: "small", textContent: t("profile.unrated") })]));
  $("#history").replaceChildren(...Object.entries(data.history).map(([g, points]) =>
    el("div", { className: "history-game" }, el("span", { className: "label", textContent: gameName(g) }), chart(points))));
  $("#duels").replaceChildren(...Object.entries(data.duels).map(([g, f]) => el("div", { className: "game-figs" },
    el("span", { className: "label", textContent: gameName(g) }),
    figures([[t("profile.played"), f.played], [t("profile.won"), f.won], [t("profile.lost"), f.lost], [t("profile.drawn"), f.drawn]]))));
  if (!Object.keys(data.duels).length) $("#duels").textContent = t("profile.none");
  // per game and variant (the server keeps them so); wins with a hint counted apart
  $("#solo").replaceChildren(...Object.entries(data.solo).flatMap(([g, all]) =>
    Object.entries(all.variants || { "": all }).map(([v, f]) => el("div", { className: "game-figs" },
      el("span", { className: "label",
        textContent: v ? `${gameName(g)} · ${t(`variants.${g}`)[v] || t("custom_options")}` : gameName(g) }),
      figures([[t("profile.played"), f.played], [t("profile.won"), f.won], [t("won_hinted"), f.won_hinted || 0],
        [t("profile.best"), f.best == null ? "–" : points(f.best)]])))));
  if (!Object.keys(data.solo).length) $("#solo").textContent = t("no_stats");
  $("#recent").replaceChildren(...data.recent.map((m) => {
    const side = m.players[0].id === data.user.id ? 0 : 1;
    const other = m.players[1 - side];
    const result = m.state !== "over" ? t("profile.live") : m.winner == null ? t("profile.result_draw")
      : m.winner === side ? t("profile.result_won") : t("profile.result_lost");
    const scores = m.state === "over" ? ` · ${m.finals[side]} : ${m.finals[1 - side]}` : "";
    // the rating change this match made and why (docs/fairplay.md, "What moves a rating")
    const c = m.change;
    const why = c && (c.state === "released" ? "rated" : c.state === "voided" ? "marked" : c.reason);
    const change = c ? ` · ${t(`profile.change.${why}`, { points: signed(c.state === "held" ? c.held : c.applied) })}` : "";
    return el("li", {}, el("a", { href: `/match?id=${encodeURIComponent(m.id)}`,
      textContent: `${formatName(`${m.game}/${m.variant}/${m.limit_s}`)} · ${t("profile.against", { name: playerName(other.name) })} · ${result}${scores}${change}` }));
  }));
  if (!data.recent.length) $("#recent").append(el("li", { textContent: t("profile.none") }));
  $("#all-matches").href = `/matches?player=${encodeURIComponent(data.user.id)}`;
  $("#tournaments").replaceChildren(...(data.tournaments || []).map((tour) => {
    const name = tour.name || t("tour.hourly", { game: gameName(tour.format.split("/")[0]) });
    const day = new Date(tour.starts_ms).toLocaleDateString(lang());
    const place = t(tour.state === "over" ? "tour.place" : "tour.place_now", { rank: tour.rank, players: tour.players });
    const pts = t(`tour.n_points.${tour.points === 1 ? "one" : "many"}`, { n: tour.points });
    return el("li", {}, el("a", { href: `/tournament?id=${encodeURIComponent(tour.id)}`,
      textContent: `${name} · ${formatName(tour.format)} · ${day} · ${place} · ${pts}` }));
  }));
  if (!(data.tournaments || []).length) $("#tournaments").append(el("li", { textContent: t("tour.played_none") }));
  renderFairPlay(data.fairplay || { marked: false, refunds: [] });
  document.title = `${playerName(data.user.name)} · Patience Arena`;
}

/** Fair play (docs/fairplay.md): the mark and why, and the rating points given back to this player. */
function renderFairPlay(fair) {
  const mark = $("#fair-mark");
  mark.hidden = !fair.marked;
  mark.dataset.category = fair.category || "";
  if (fair.marked) mark.textContent = t(`fair.marked.${["bot", "name"].includes(fair.category) ? fair.category : "other"}`);
  const refunds = fair.refunds || [];
  $("#refunds-panel").hidden = !refunds.length;
  $("#refunds").replaceChildren(...refunds.map((r) => el("li", {}, el("a", { href: `/match?id=${encodeURIComponent(r.match)}`,
    textContent: t("fair.refund", { points: r.points, game: gameName(r.game), date: new Date(r.at_ms).toLocaleDateString(lang()) }) }))));
}

async function main() {
  const user = await openPage();
  onLang(render);
  const id = params.get("u") || (user && user.id);
  if (!id) {
    location.replace("/account?next=/profile");
    return;
  }
  const response = await request(`/api/profile/${encodeURIComponent(id)}`);
  const found = response && response.ok ? await response.json().catch(() => null) : null;
  if (!response || response.status >= 500) {
    applyText();
    noAnswer("offline.failed"); // no answer (or a proxy's for a server away): not "no such player"
    return;
  }
  if (!found) {
    applyText();
    $("#error").dataset.t = "profile.no_player"; // follows a language switch
    $("#error").textContent = t("profile.no_player");
    $("#error").hidden = false;
    for (const panel of document.querySelectorAll("main section.panel")) panel.hidden = true; // no empty headings
    return;
  }
  data = found;
  if (user && user.id !== data.user.id) $("#report").append(reportBox(data.user.id, playerName(data.user.name))); // never oneself
  render();
}

main();
