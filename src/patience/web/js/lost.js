// The page of an address that is no page: the site's header and navigation, the words in the
// browser's language, and the way back to the games.

import { openPage } from "./arena.js";
import { onLang } from "./i18n.js";
import { applyText } from "./ui.js";

onLang(() => applyText()); // the language switch passes its code: the whole page
applyText();
openPage();
