// Draws every chart from its JSON spec (data, not code) with the site's own plotly.js.
(function () {
  "use strict";
  var config = { responsive: true, displaylogo: false, showSendToCloud: false };
  function draw() {
    document.querySelectorAll("script.sg-chart-spec").forEach(function (spec) {
      var key = spec.getAttribute("data-chart");
      var target = document.querySelector('div.sg-plot[data-chart="' + key + '"]');
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
