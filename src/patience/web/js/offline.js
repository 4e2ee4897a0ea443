// The page the service worker shows when a page cannot be reached: said in the page's language, with a
// button that tries again. The page comes back by itself once the server answers again: it asks for its
// address every few seconds (the browser's "online" event alone misses a server that was away on a network
// that stayed up).

import { t } from "./i18n.js";
import { applyText } from "./ui.js";

applyText();
document.title = `${t("offline.title")} · Patience Arena`;
document.querySelector("#retry").addEventListener("click", () => location.reload());
window.addEventListener("online", () => location.reload());

let wait = 1000; // the first ask after a second, then less often, up to every 5 s

function ask() {
  // any answer from the server (even an error page) means it is back: the page itself comes then
  fetch(location.href, { method: "HEAD", cache: "no-store", credentials: "same-origin" })
    .then(() => location.reload(), () => {
      wait = Math.min(5000, wait * 1.5);
      setTimeout(ask, wait);
    });
}

setTimeout(ask, wait);
