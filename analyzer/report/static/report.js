// Index search and filter: runs from file:// with no network, no dependencies.
(function () {
  "use strict";
  var box = document.getElementById("search");
  var filter = document.getElementById("filter");
  var shown = document.getElementById("shown");
  var items = Array.prototype.slice.call(document.querySelectorAll("ul.concepts > li"));
  if (!box || !filter) { return; }
  function apply() {
    var words = box.value.toLowerCase().split(/\s+/).filter(Boolean);
    var mode = filter.value;
    var count = 0;
    items.forEach(function (li) {
      var text = li.getAttribute("data-search") || "";
      var ok = words.every(function (w) { return text.indexOf(w) !== -1; });
      if (mode === "gaps") { ok = ok && li.getAttribute("data-gap") === "yes"; }
      if (mode === "complete") { ok = ok && li.getAttribute("data-gap") === "no"; }
      if (mode.indexOf("gap-") === 0) {
        var status = li.getAttribute("data-status-" + mode.slice(4)) || "";
        ok = ok && status !== "implemented";
      }
      li.hidden = !ok;
      if (ok) { count += 1; }
    });
    shown.textContent = count + " of " + items.length + " concepts";
  }
  box.addEventListener("input", apply);
  filter.addEventListener("change", apply);
  var q = new URLSearchParams(window.location.search).get("q");
  if (q) { box.value = q; }
  apply();
})();
