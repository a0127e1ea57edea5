// Draws every chart from its JSON spec (data, not code) with the site's own plotly.js.
// A spec finds its plot by comparing data-chart values, never by a selector built from
// them: the key holds the campaign's directory name, which may hold quotes or brackets.
(function () {
  "use strict";
  var config = { responsive: true, displaylogo: false, showSendToCloud: false };
  function draw() {
    var targets = new Map();
    document.querySelectorAll("div.sg-plot[data-chart]").forEach(function (plot) {
      var key = plot.getAttribute("data-chart");
      if (!targets.has(key)) targets.set(key, plot);
    });
    document.querySelectorAll("script.sg-chart-spec").forEach(function (spec) {
      var target = targets.get(spec.getAttribute("data-chart"));
      if (!target || target.getAttribute("data-drawn")) return;
      var figure = JSON.parse(spec.textContent);
      Plotly.newPlot(target, figure.data, figure.layout, config);
      target.setAttribute("data-drawn", "1");
    });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", draw);
  } else {
    draw();
  }
})();
