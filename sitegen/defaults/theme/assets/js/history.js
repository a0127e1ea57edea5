// A report's history page in a version holds that version's own row only (a published
// page never changes); the table of every version is a site-level file each build
// rewrites (its "table", beside the chart's spec). Fetched, it takes the row's place, and
// the row of the version read is marked: its link leads to this page's report.
(function () {
  "use strict";
  function load(box) {
    var source = box.getAttribute("data-history");
    fetch(source)
      .then(function (response) {
        if (!response.ok) throw new Error(source + ": HTTP " + response.status);
        return response.json();
      })
      .then(function (history) {
        var table = new DOMParser().parseFromString(history.table, "text/html").body;
        var report = new URL("..", location.href).pathname;
        table.querySelectorAll("a[href]").forEach(function (link) {
          if (new URL(link.getAttribute("href"), location.href).pathname !== report) return;
          var mark = document.createElement("span");
          mark.className = "sg-muted";
          mark.textContent = " (" + box.getAttribute("data-this") + ")";
          link.after(mark);
        });
        box.replaceChildren.apply(box, Array.from(table.childNodes));
      })
      .catch(function (error) {
        console.error("history not loaded:", error.message);
      });
  }
  function start() {
    document.querySelectorAll("div.sg-history-table[data-history]").forEach(load);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
