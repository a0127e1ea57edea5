// material draws the version selector once it has read versions.json: its button's
// accessible name ("Select version") leaves out the version it shows, which a speech
// user says to press it (axe: label-content-name-mismatch). The shown version becomes
// its name; what the button does stays as its title.
(function () {
  "use strict";
  function fix() {
    document.querySelectorAll(".md-version__current[aria-label]").forEach(function (button) {
      button.title = button.getAttribute("aria-label");
      button.removeAttribute("aria-label");
    });
  }
  var header = document.querySelector(".md-header");
  if (!header) return;
  fix();
  new MutationObserver(fix).observe(header, { childList: true, subtree: true });
})();
