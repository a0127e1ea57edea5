// mkdocs-material's inline content script (partials/javascripts/content.html), as a file
// so the Content-Security-Policy allows it: opens the tab a #fragment points at.
(function () {
  var target = document.getElementById(location.hash.slice(1));
  if (target && target.name) target.checked = target.name.startsWith("__tabbed_");
})();
