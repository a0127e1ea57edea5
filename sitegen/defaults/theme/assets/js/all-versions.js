// A version's changelog and history pages hold that version's own entry only (a
// published page never changes); what every version published is a site-level file each
// build rewrites ({"html": …}, beside a chart's spec for a history). Fetched, it takes the
// entry's place, and the version read is marked: its link leads to data-here (relative to
// this page: the changelog itself, a history's report).
(function () {
  "use strict";
  function load(box) {
    var source = box.getAttribute("data-all-versions");
    fetch(source)
      .then(function (response) {
        if (!response.ok) throw new Error(source + ": HTTP " + response.status);
        return response.json();
      })
      .then(function (versions) {
        var content = new DOMParser().parseFromString(versions.html, "text/html").body;
        var here = new URL(box.getAttribute("data-here"), location.href).pathname;
        content.querySelectorAll("a[href]").forEach(function (link) {
          if (new URL(link.getAttribute("href"), location.href).pathname !== here) return;
          var mark = document.createElement("span");
          mark.className = "sg-muted";
          mark.textContent = " (" + box.getAttribute("data-this") + ")";
          link.after(mark);
        });
        box.replaceChildren.apply(box, Array.from(content.childNodes));
      })
      .catch(function (error) {
        console.error("every version's entries not loaded:", error.message);
      });
  }
  function start() {
    // Opened from files, a page cannot fetch: its own entry stays, with its note.
    if (location.protocol === "file:") return;
    document.querySelectorAll("div.sg-all-versions[data-all-versions]").forEach(load);
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
