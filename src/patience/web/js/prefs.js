// Loaded by every page as a classic script in <head>, before the first paint: the look this browser keeps
// (theme, table colour, card size, hand) goes onto <html> so nothing flashes in the default look; and once the
// page has loaded, the service worker that keeps the static files (/sw.js) is registered.
(function () {
  "use strict";
  var root = document.documentElement;
  var CHOICES = {
    theme: ["system", "light", "dark"],
    felt: ["green", "blue", "red", "grey"],
    cards: ["normal", "small", "large"],
    hand: ["right", "left"],
  };
  for (var name in CHOICES) {
    var value = null;
    try {
      value = localStorage.getItem("patience." + name);
    } catch (e) {
      // storage off: the default look
    }
    root.setAttribute("data-" + name, CHOICES[name].indexOf(value) >= 0 ? value : CHOICES[name][0]);
  }
  // dark or not: the theme "dark", or "system" while the system's scheme is dark. On <html data-dark> for the
  // style sheet, and the browser's own bar in its colour (the <meta> comes before this script); again whenever
  // the setting changes ("patience:look", from settings.js) or the system's scheme does.
  var scheme = window.matchMedia ? window.matchMedia("(prefers-color-scheme: dark)") : null;
  function lookDark() {
    var theme = root.getAttribute("data-theme");
    var dark = theme === "dark" || (theme === "system" && !!scheme && scheme.matches);
    root.setAttribute("data-dark", dark ? "true" : "false");
    var bar = document.querySelector('meta[name="theme-color"]');
    if (bar) bar.setAttribute("content", dark ? "#0b1a12" : "#174f33");
  }
  lookDark();
  if (scheme && scheme.addEventListener) scheme.addEventListener("change", lookDark);
  window.addEventListener("patience:look", lookDark);
  if ("serviceWorker" in navigator) {
    // once the page is loaded and has had a moment: its own requests first, then the worker's copies
    window.addEventListener("load", function () {
      setTimeout(function () {
        navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(function () {
          // no worker: the site works as before, without the offline page
        });
      }, 1500);
    });
  }
})();
