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
  // the browser's own bar in the dark theme's colour too (the <meta> comes before this script)
  var dark = root.getAttribute("data-theme") === "dark" || (root.getAttribute("data-theme") === "system" &&
    window.matchMedia && window.matchMedia("(prefers-color-scheme: dark)").matches);
  var bar = document.querySelector('meta[name="theme-color"]');
  if (dark && bar) bar.setAttribute("content", "#0b1a12");
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
