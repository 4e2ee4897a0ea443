// The "Report" button of a player's profile and of a finished match: a small form (what is wrong, an
// optional note) posted to /api/report with the CSRF token; the answer said plainly (docs/fairplay.md).
// Only for a signed-in player, and never about oneself: the caller decides where it appears.

import { el, postForm } from "./arena.js";
import { t } from "./i18n.js";
import { applyText } from "./ui.js";

const CATEGORIES = ["bot", "name", "other"];
let made = 0;

function texted(tag, key, props = {}, params = null) {
  const node = el(tag, props);
  node.dataset.t = key;
  if (params) node.dataset.p = JSON.stringify(params);
  return node;
}

/** A box with the "Report NAME" button that opens the form reporting the account ``id``. */
export function reportBox(id, name) {
  const n = ++made;
  const box = el("div", { className: "report-box" });
  const open = texted("button", "report.button", { type: "button", className: "btn solid report-open" }, { name });
  open.setAttribute("aria-expanded", "false");
  const status = el("p", { className: "report-status small", hidden: true });
  status.setAttribute("role", "status");
  const form = el("form", { className: "report-form stack", hidden: true });
  form.id = `report-form-${n}`;
  open.setAttribute("aria-controls", form.id);
  const choices = el("fieldset", { className: "report-choices" }, texted("legend", "report.what"));
  CATEGORIES.forEach((category, i) => {
    const radio = el("input", { type: "radio", name: "category", value: category, checked: i === 0 });
    choices.append(el("label", { className: "report-choice" }, radio, texted("span", `report.cat.${category}`)));
  });
  const note = el("textarea", { name: "note", maxLength: 500, rows: 3 });
  const send = texted("button", "report.send", { type: "submit", className: "btn primary" });
  const cancel = texted("button", "report.cancel", { type: "button", className: "btn solid" });
  form.append(choices, el("label", {}, texted("span", "report.note"), note), el("div", { className: "report-actions" }, send, cancel));

  const say = (key, params = {}, bad = false) => {
    status.dataset.t = key;
    status.dataset.p = JSON.stringify(params);
    status.textContent = t(key, params);
    status.classList.toggle("bad", bad);
    status.hidden = false;
  };
  const show = (on) => {
    form.hidden = !on;
    open.setAttribute("aria-expanded", String(on));
    if (on) {
      status.hidden = true;
      form.querySelector("input").focus();
    }
  };
  open.addEventListener("click", () => show(form.hidden));
  cancel.addEventListener("click", () => {
    show(false);
    open.focus();
  });
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    send.disabled = true;
    const category = form.querySelector("input[name=category]:checked").value;
    let answer;
    try {
      answer = await postForm("/api/report", { account: id, category, note: note.value.trim() });
    } catch {
      answer = { status: 0, error: "network" };
    }
    send.disabled = false;
    if (answer.status === 200 && answer.ok) {
      show(false);
      note.value = "";
      open.disabled = true; // one report of this account from this page is enough
      say("report.done", { name });
    } else if (answer.error === "too_many_reports") {
      say("report.too_many", { min: Math.max(1, Math.ceil((answer.retry_after || 60) / 60)) }, true);
    } else {
      const known = ["sign_in", "bad_note", "bad_account", "not_found", "bad_category"].includes(answer.error);
      say(known ? `report.err.${answer.error}` : "report.err.failed", {}, true);
    }
  });
  box.append(open, form, status);
  applyText(box);
  return box;
}
