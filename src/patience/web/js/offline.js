// The page the service worker shows when a page cannot be reached: said in the page's language, with a
// button that tries again (and the page comes back by itself once the browser is online).

import { t } from "./i18n.js";
import { applyText } from "./ui.js";

applyText();
document.title = `${t("offline.title")} · Patience Arena`;
document.querySelector("#retry").addEventListener("click", () => location.reload());
window.addEventListener("online", () => location.reload());
