// Draws every chart from its JSON spec (data, not code) with the site's own plotly.js:
// inline in the page, or, for a large campaign, a JSON file the plot names (data-spec).
// A spec finds its plot by comparing data-chart values, never by a selector built from
// them: the key holds the campaign's directory name, which may hold quotes or brackets.
(function () {
  "use strict";
  var config = { responsive: true, displaylogo: false, showSendToCloud: false };
  function plot(target, figure) {
    if (target.getAttribute("data-drawn")) return;
    // The box keeps the chart's own height: resizing the window makes plotly size the
    // chart to its box, which CSS alone gives only a minimum height.
    if (figure.layout && figure.layout.height) target.style.height = figure.layout.height + "px";
    Plotly.newPlot(target, figure.data, figure.layout, config);
    // Drawn, the box holds plotly's controls (buttons, links): a named group, not an
    // image, whose content would be presentational (axe: nested-interactive).
    target.setAttribute("role", "group");
    target.setAttribute("data-drawn", "1");
  }
  function draw() {
    var targets = new Map();
    document.querySelectorAll("div.sg-plot[data-chart]").forEach(function (target) {
      var key = target.getAttribute("data-chart");
      if (!targets.has(key)) targets.set(key, target);
      var source = target.getAttribute("data-spec");
      if (source) {
        fetch(source)
          .then(function (response) {
            if (!response.ok) throw new Error(source + ": HTTP " + response.status);
            return response.json();
          })
          .then(function (figure) { plot(target, figure); })
          .catch(function (error) {
            // Say so where the chart should be; the table of its numbers stays below.
            target.textContent = target.getAttribute("data-failed") || "chart unavailable";
            console.error("chart not drawn:", error.message);
          });
      }
    });
    document.querySelectorAll("script.sg-chart-spec").forEach(function (spec) {
      var target = targets.get(spec.getAttribute("data-chart"));
      if (target) plot(target, JSON.parse(spec.textContent));
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
