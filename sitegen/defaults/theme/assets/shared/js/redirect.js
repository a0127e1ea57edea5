// The redirect pages (the site root, latest/…): over HTTP go to the directory URL; from
// the file system go to its index.html, since a folder opens as a directory listing.
(function () {
  "use strict";
  var target = document.currentScript.getAttribute("data-target");
  if (location.protocol === "file:") target += "index.html";
  location.replace(target + location.hash);
})();
