// Pages opened from the file system: a link to a directory URL ("speed/") would open a
// directory listing, so such links go to the folder's index.html instead. Over HTTP
// nothing changes.
(function () {
  "use strict";
  if (location.protocol !== "file:") return;
  function fix() {
    document.querySelectorAll("a[href]").forEach(function (link) {
      var href = link.getAttribute("href");
      if (/^[a-z][a-z0-9+.-]*:|^#|^\/\//i.test(href)) return;
      var cut = href.search(/[?#]/);
      var path = cut < 0 ? href : href.slice(0, cut);
      var rest = cut < 0 ? "" : href.slice(cut);
      if (path === "") return;
      if (path.endsWith("/")) link.setAttribute("href", path + "index.html" + rest);
      else if (path === "." || path === "..") link.setAttribute("href", path + "/index.html" + rest);
    });
  }
  if (document.readyState === "loading") document.addEventListener("DOMContentLoaded", fix);
  else fix();
})();
