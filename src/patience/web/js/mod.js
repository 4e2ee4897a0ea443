// The moderators' page (docs/fairplay.md): the queue of flagged and reported accounts, and for one account
// the evidence the server keeps (its think times against the population's, hint agreement against what
// its rating expects, its rated games with links to their replays, the reports, the audit log) and the
// actions: mark as a bot, clear, close, each with a note. The server answers 404 to anyone else.

import { el, gameName, openPage, postForm } from "./arena.js";
import { lang, onLang, playerName, t } from "./i18n.js";
import { $, applyText, getJSON, request } from "./ui.js";

let queue = [];
let account = null;
let chosen = new URLSearchParams(location.search).get("id");

const pct = (x) => (x == null ? "–" : `${Math.round(x * 100)} %`);
const when = (ms) => new Date(ms).toLocaleString(lang(), { dateStyle: "short", timeStyle: "short" });
const stateName = (state) => t(`mod.states.${state || "reported"}`);

/** A reason of the detection, or a note of the server's in the audit log, as the server sends it ({k, p}: its key
 * and figures, among them reasons of their own, a player's name or a game's id) in this language; a reason kept
 * before reasons had keys: its text. */
function reasonText(r) {
  if (Array.isArray(r)) return r.map(reasonText).join("; ");
  if (!r || typeof r !== "object") return String(r);
  const figures = {};
  for (const [name, value] of Object.entries(r.p || {})) {
    if (name === "name") figures.name = playerName(value);
    else if (name === "game") figures.game = gameName(value);
    else if (name === "points" || name === "delta") { // rating points, one decimal (a change: with its sign)
      figures[name] = Number(value).toLocaleString(lang(), { minimumFractionDigits: 1, maximumFractionDigits: 1,
        signDisplay: name === "delta" ? "exceptZero" : "auto" });
    } else figures[name] = typeof value === "number" ? value.toLocaleString(lang()) : reasonText(value);
  }
  const key = `mod.reason.${r.k}`;
  const text = t(key, figures);
  return text === key ? r.k : text;
}

function say(key, params = {}, bad = false) {
  const box = $("#mod-msg");
  box.textContent = t(key, params);
  box.classList.toggle("bad", bad);
  box.hidden = false;
}

async function loadQueue() {
  const answer = await getJSON("/api/mod/queue", { cache: "no-store" });
  if (!answer) return say("mod.err.failed", {}, true);
  queue = answer.accounts;
  renderQueue();
}

async function loadAccount(id) {
  const response = await request(`/api/mod/account/${encodeURIComponent(id)}`, { cache: "no-store" });
  const found = response && response.ok ? await response.json().catch(() => null) : null;
  if (!found) {
    account = null;
    $("#account").hidden = true;
    const unanswered = !response || response.status >= 500; // no answer (or a proxy's): no "no such account"
    return say(unanswered ? "mod.err.failed" : "mod.err.no_account", {}, true);
  }
  account = found;
  renderAccount();
}

function choose(id) {
  chosen = id;
  history.replaceState(null, "", `/mod?id=${encodeURIComponent(id)}`);
  $("#act-msg").hidden = true;
  loadAccount(id).then(() => $("#account-name").focus());
}

function renderQueue() {
  $("#queue-empty").hidden = queue.length > 0;
  $("#queue").hidden = !queue.length;
  $("#queue tbody").replaceChildren(...queue.map((row) => {
    const open = el("a", { href: `/mod?id=${encodeURIComponent(row.id)}`, textContent: playerName(row.name) });
    open.addEventListener("click", (e) => {
      e.preventDefault();
      choose(row.id);
    });
    const why = [...row.reasons.map(reasonText), ...row.categories.map((c) => t(`report.cat.${c}`))].join(" · ");
    const tr = el("tr", {}, el("td", {}, open), el("td", { textContent: String(row.score) }),
      el("td", { textContent: stateName(row.state) }), el("td", { textContent: String(row.reports) }),
      el("td", { className: "why", textContent: why || "–" }));
    tr.dataset.account = row.id;
    if (row.id === chosen) tr.setAttribute("aria-current", "true");
    return tr;
  }));
  labelCells($("#queue"));
}

/** Each cell of ``table`` named by its column's heading (data-label): a phone shows each row as a card of
 * named lines, no column off to the side; the table keeps its roles for screen readers all the same. */
function labelCells(table) {
  const heads = [...table.querySelectorAll("thead th")].map((th) => th.textContent);
  table.setAttribute("role", "table");
  for (const tr of table.querySelectorAll("tr")) {
    tr.setAttribute("role", "row");
    for (const [i, cell] of [...tr.children].entries()) {
      if (cell.tagName === "TH") cell.setAttribute("role", "columnheader");
      else {
        cell.setAttribute("role", "cell");
        cell.dataset.label = cell.colSpan > 1 ? "" : heads[i] || "";
      }
    }
  }
  for (const part of table.querySelectorAll("thead, tbody")) part.setAttribute("role", "rowgroup");
}

/** Bars of the account's think times beside the population's, each as a share of its actions. */
function thinkChart(think) {
  const total = (counts) => counts.reduce((a, b) => a + b, 0);
  const mine = total(think.account);
  const all = total(think.population);
  const label = (i) => (i === 0 ? `< ${think.edges[0]} ms` : i === think.edges.length ? `≥ ${think.edges[i - 1]} ms`
    : `${think.edges[i - 1]}–${think.edges[i]} ms`);
  const bar = (share, kind) => {
    const b = el("span", { className: `think-bar ${kind}` });
    b.style.width = `${Math.round(share * 100)}%`;
    return b;
  };
  const rows = think.account.map((n, i) => {
    const a = n / Math.max(1, mine);
    const p = think.population[i] / Math.max(1, all);
    return el("div", { className: "think-row" }, el("span", { className: "think-label", textContent: label(i) }),
      el("span", { className: "think-bars" }, bar(a, "mine"), bar(p, "all")),
      el("span", { className: "think-figs", textContent: `${pct(a)} · ${pct(p)}` }));
  });
  const legend = el("p", { className: "small think-legend" },
    el("span", { className: "think-key mine" }), ` ${t("mod.this_account", { n: mine })}  `,
    el("span", { className: "think-key all" }), ` ${t("mod.population", { n: all })}`);
  return [legend, ...rows];
}

function gameRow(g) {
  const f = g.figures || {};
  const kinds = f.kinds ? Object.entries(f.kinds).map(([k, n]) => `${k === "-" ? "–" : k} ${n}`).join(" · ") : "–";
  const link = g.match ? el("a", { href: `/match?id=${encodeURIComponent(g.match)}`, textContent: t("mod.replay") })
    : el("span", { textContent: "" });
  const verdict = g.verdict ? t(`mod.verdicts.${g.verdict}`) : t("mod.pending");
  const steps = el("details", { className: "steps" }, el("summary", { textContent: t("mod.steps", { n: g.steps.length }) }),
    el("pre", { textContent: g.steps.map((s) => `${s[0]}\t${s[1]} ms\t${s[2] || "-"}${s[3] != null ? `\t${s[3]} ms ${s[4]} px` : ""}`).join("\n") }));
  const tr = el("tr", {}, el("td", { textContent: when(g.at_ms) }),
    el("td", { textContent: `${gameName(g.game)} · ${t(`mod.kinds.${g.kind}`)} · ${g.rating}` }),
    el("td", { className: `verdict ${g.verdict || ""}`, textContent: verdict }),
    el("td", { textContent: f.median_ms == null ? "–" : `${Math.round(f.median_ms)} ms` }), el("td", { textContent: pct(f.fast_share) }),
    el("td", { textContent: f.cv == null ? "–" : f.cv.toFixed(2) }), el("td", { textContent: f.burst == null ? "–" : String(f.burst) }),
    el("td", { textContent: f.decisions ? `${f.agreed}/${f.decisions}` : "–" }), el("td", { className: "how" }, el("span", { textContent: kinds }), steps),
    el("td", {}, link));
  tr.dataset.key = g.key;
  return tr;
}

function renderAccount() {
  if (!account) return;
  const a = account;
  $("#account").hidden = false;
  $("#account-name").textContent = playerName(a.user.name);
  $("#account-name").tabIndex = -1;
  const profile = el("a", { href: `/profile?u=${encodeURIComponent(a.user.id)}`, textContent: t("mod.profile") });
  $("#account-facts").replaceChildren(`${a.user.login} · ${t("mod.since", { date: when(a.user.since_ms) })} · `,
    `${t("mod.state")}: ${stateName(a.state)}${a.category ? ` (${t(`report.cat.${a.category}`)})` : ""} · `, profile);
  $("#score-line").textContent = t("mod.score_line", { score: a.score.score, games: a.score.games });
  $("#reasons").replaceChildren(...(a.score.reasons.length ? a.score.reasons.map(reasonText) : [t("mod.no_reason")])
    .map((r) => el("li", { textContent: r })));
  const share = a.score.decisions ? a.score.agreed / a.score.decisions : null;
  $("#agreement").textContent = a.score.decisions
    ? t("mod.agreement_line", { agreed: a.score.agreed, decisions: a.score.decisions, share: pct(share), expected: pct(a.expected) })
    : t("mod.agreement_none", { expected: pct(a.expected) });
  $("#think").replaceChildren(...thinkChart(a.think));
  $("#games tbody").replaceChildren(...a.games.map(gameRow));
  if (!a.games.length) $("#games tbody").append(el("tr", {}, el("td", { colSpan: 10, textContent: t("mod.no_games") })));
  labelCells($("#games"));
  $("#reports").replaceChildren(...a.reports.map((r) => el("li", {},
    el("a", { href: `/profile?u=${encodeURIComponent(r.by)}`, textContent: playerName(r.by_name) }),
    ` · ${t(`report.cat.${r.category}`)} · ${when(r.at_ms)}${r.note ? ` · “${r.note}”` : ""}`)));
  if (!a.reports.length) $("#reports").append(el("li", { textContent: t("mod.none") }));
  $("#audit").replaceChildren(...a.audit.map((x) => el("li", {
    textContent: `${when(x.at_ms)} · ${t(`mod.audit_actions.${x.action}`) || x.action} · ${x.by_name ? playerName(x.by_name) : t("mod.automatic")}${x.why ? ` · ${reasonText(x.why)}` : x.note ? ` · “${x.note}”` : ""}`,
  })));
  if (!a.audit.length) $("#audit").append(el("li", { textContent: t("mod.none") }));
  document.title = `${playerName(a.user.name)} · ${t("mod.title")} · Patience Arena`;
}

async function act(e) {
  e.preventDefault();
  if (!account) return;
  const form = e.target;
  const note = $("#act-note").value.trim();
  const msg = $("#act-msg");
  const tell = (key, params = {}, bad = false) => {
    msg.textContent = t(key, params);
    msg.classList.toggle("bad", bad);
    msg.hidden = false;
  };
  if (!note) {
    $("#act-note").focus();
    return tell("mod.err.bad_note", {}, true);
  }
  const action = form.querySelector("input[name=action]:checked").value;
  const button = form.querySelector("button[type=submit]");
  button.disabled = true;
  const answer = await postForm(`/api/mod/account/${encodeURIComponent(account.user.id)}`, { action, note });
  button.disabled = false;
  if (answer.status !== 200) {
    const known = ["bad_note", "bad_action", "not_found"].includes(answer.error);
    return tell(known ? `mod.err.${answer.error}` : "mod.err.failed", {}, true);
  }
  $("#act-note").value = "";
  await Promise.all([loadQueue(), loadAccount(account.user.id)]);
  tell("mod.done", { name: playerName(account.user.name), state: stateName(answer.state) });
}

function render() {
  applyText();
  renderQueue();
  renderAccount();
}

async function main() {
  await openPage();
  onLang(render);
  applyText();
  $("#act").addEventListener("submit", act);
  await loadQueue();
  if (chosen) await loadAccount(chosen);
}

main();
