// The account page: sign in, create an account, change the name shown, sign out. The forms are
// plain form posts with a CSRF token; with scripts on they go through fetch and say what went wrong.

import { fetchMe, navBar, postForm } from "./arena.js";
import { onLang, setLang, t } from "./i18n.js";
import { $, applyText } from "./ui.js";

const params = new URLSearchParams(location.search);
const next = params.get("next") && params.get("next").startsWith("/") && !params.get("next").startsWith("//")
  ? params.get("next") : "/duel";

function showError(code, wait) {
  const box = $("#error");
  if (!code) {
    box.hidden = true;
    return;
  }
  const text = t(`account.err.${code}`, { wait: wait ?? "" });
  box.textContent = text === `account.err.${code}` ? code : text;
  box.hidden = false;
}

async function render() {
  const { user, csrf } = await fetchMe(true);
  navBar($("#nav"), user);
  for (const input of document.querySelectorAll("input[name=csrf]")) input.value = csrf;
  for (const input of document.querySelectorAll("input[name=next]")) input.value = next;
  $("#signed-in").hidden = !user;
  $("#signed-out").hidden = !!user;
  if (user) {
    $("#who").textContent = t("account.signed_in_as", { name: user.name });
    $("#name-form").name.value = user.name;
  }
  applyText();
}

function bindForm(id, path, after) {
  const form = $(id);
  form.addEventListener("submit", async (e) => {
    e.preventDefault();
    const fields = Object.fromEntries(new FormData(form));
    delete fields.csrf;
    const answer = await postForm(path, fields);
    if (!answer.ok) {
      showError(answer.error, answer.retry_after);
      return;
    }
    showError(null);
    after(answer);
  });
}

async function main() {
  if (params.get("lang")) setLang(params.get("lang"));
  onLang(render);
  await render();
  if (params.get("error")) showError(params.get("error"), params.get("wait"));
  bindForm("#signin-form", "/account/signin", (a) => (location.href = a.next));
  bindForm("#signup-form", "/account/signup", (a) => (location.href = a.next));
  bindForm("#signout-form", "/account/signout", () => render());
  bindForm("#name-form", "/account/name", () => render());
}

main();
