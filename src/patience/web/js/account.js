// The account page: sign in, create an account, and, signed in, the account itself: the name shown, the
// password, the e-mail address (when the server sends mail), the browsers signed in, the data to take
// away and closing the account; signed out, a forgotten password (a link by mail) and the link's form.
// The forms are plain form posts with a CSRF token; with scripts on they go through fetch and say what
// went wrong.

import { fetchMe, navBar, postForm } from "./arena.js";
import { lang, onLang, playerName, setLang, t } from "./i18n.js";
import { $, applyText, getJSON } from "./ui.js";

const params = new URLSearchParams(location.search);
const next = params.get("next") && params.get("next").startsWith("/") && !params.get("next").startsWith("//")
  ? params.get("next") : "/duel";
const resetToken = params.get("reset");
if (resetToken) history.replaceState(null, "", "/account"); // the token leaves the address bar (and the history)
let resetWorks = null; // whether the reset link still sets a password: asked before its form is shown

function showError(code, wait) {
  const box = $("#error");
  if (!code) {
    box.hidden = true;
    return;
  }
  const text = code === "network" ? t("offline.failed") : t(`account.err.${code}`, { wait: wait ?? "" });
  box.textContent = text === `account.err.${code}` ? code : text;
  box.hidden = false;
  $("#info").hidden = true;
}

function showInfo(key) {
  const box = $("#info");
  box.hidden = !key;
  if (key) {
    box.textContent = t(key);
    $("#error").hidden = true;
  }
}

function when(ms) {
  return new Date(ms).toLocaleString(lang(), { dateStyle: "medium", timeStyle: "short" });
}

function renderSessions(sessions) {
  const list = $("#sessions");
  list.replaceChildren();
  for (const s of sessions) {
    const item = document.createElement("li");
    const about = document.createElement("div");
    const name = document.createElement("strong");
    name.textContent = s.browser || t("account.unknown_browser");
    about.append(name);
    if (s.current) {
      const mark = document.createElement("span");
      mark.className = "session-mark";
      mark.textContent = t("account.this_browser");
      about.append(" ", mark);
    }
    const times = document.createElement("small");
    times.textContent = `${t("account.signed_in_at", { date: when(s.created_ms) })} · ${t("account.seen", { date: when(s.seen_ms) })}`;
    about.append(document.createElement("br"), times);
    const end = document.createElement("button");
    end.type = "button";
    end.className = "btn solid";
    end.textContent = t("account.end_session");
    end.addEventListener("click", async () => {
      const answer = await postForm("/account/sessions/end", { session: s.id });
      if (!answer.ok) return showError(answer.error, answer.retry_after);
      showError(null);
      await render();
    });
    item.append(about, end);
    list.append(item);
  }
}

async function render() {
  let who;
  try {
    who = await fetchMe(true);
  } catch {
    showError("network"); // the page as it was (the forms say it again when sent)
    return;
  }
  const { user, csrf, mail } = who;
  navBar($("#nav"), user);
  for (const input of document.querySelectorAll("input[name=csrf]")) input.value = csrf;
  for (const input of document.querySelectorAll("input[name=next]")) input.value = next;
  $("#signed-in").hidden = !user;
  // a used or old reset link: said at once, with the forms to sign in and to ask for a new link, not its own
  const resetShown = !!resetToken && !user && resetWorks !== false;
  $("#signed-out").hidden = !!user || resetShown;
  $("#reset-form").hidden = !resetShown;
  $("#forgot-form").hidden = !mail;
  $("#email-form").hidden = !mail;
  if (resetToken) $("#reset-form").elements.token.value = resetToken;
  $("#forgot-form").elements.lang.value = lang();
  if (user) {
    $("#who").textContent = t("account.signed_in_as", { name: playerName(user.name) });
    $("#name-form").name.value = playerName(user.name) === user.name ? user.name : ""; // not a closed account's mark
    $("#password-form").elements.username.value = user.login;
    const account = await getJSON("/api/account", { credentials: "same-origin", cache: "no-store" });
    if (account) {
      renderSessions(account.sessions);
      $("#email-now").textContent = account.email ? t("account.email_now", { email: account.email }) : t("account.email_none");
      $("#email-form").elements.email.value = account.email || "";
    }
  }
  applyText();
}

function bindForm(id, path, after) {
  const form = $(id);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const fields = Object.fromEntries(new FormData(form));
    delete fields.csrf;
    delete fields.sure;
    const answer = await postForm(path, fields);
    if (!answer.ok) {
      // a signed-in form's password is the account's own, no login name was typed: "wrong password" then
      const wrong = answer.error === "wrong_password" && form.closest("#signed-in");
      showError(wrong ? "wrong_current" : answer.error, answer.retry_after);
      return;
    }
    showError(null);
    await after(answer, form);
  });
}

function clearPasswords(form) {
  for (const input of form.querySelectorAll("input[type=password]")) input.value = "";
}

async function main() {
  if (params.get("lang")) setLang(params.get("lang"));
  applyText(); // the page's own words at once, not after the server's first answer
  onLang(render);
  // the forms are the page's before it asks the server who is signed in: a press meanwhile is not a bare POST
  bindForm("#signin-form", "/account/signin", (a) => (location.href = a.next));
  bindForm("#signup-form", "/account/signup", (a) => (location.href = a.next));
  bindForm("#signout-form", "/account/signout", () => render());
  if (resetToken) {
    const answer = await postForm("/account/reset/check", { token: resetToken });
    resetWorks = answer.ok ? !!answer.works : null; // no answer: the form, which says it on sending
  }
  await render();
  if (resetWorks === false) showError("bad_token");
  if (params.get("error")) showError(params.get("error"), params.get("wait"));
  if (params.get("sent")) showInfo("account.sent");
  if (params.get("reset_done")) showInfo("account.reset_done");
  bindForm("#name-form", "/account/name", async () => {
    await render();
    showInfo("account.saved");
  });
  bindForm("#password-form", "/account/password", async (_, form) => {
    clearPasswords(form);
    await render();
    showInfo("account.password_changed");
  });
  bindForm("#email-form", "/account/email", async (_, form) => {
    clearPasswords(form);
    await render();
    showInfo("account.saved");
  });
  bindForm("#close-form", "/account/close", async (_, form) => {
    clearPasswords(form);
    await render();
    showInfo("account.closed");
  });
  bindForm("#forgot-form", "/account/forgot", (_, form) => {
    form.elements.who.value = "";
    showInfo("account.sent");
  });
  bindForm("#reset-form", "/account/reset", async (_, form) => {
    clearPasswords(form);
    location.href = "/account?reset_done=1";
  });
}

main();
