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
  if ("serviceWorker" in navigator) {
    window.addEventListener("load", function () {
      navigator.serviceWorker.register("/sw.js", { scope: "/" }).catch(function () {
        // no worker: the site works as before, without the offline page
      });
    });
  }
})();
