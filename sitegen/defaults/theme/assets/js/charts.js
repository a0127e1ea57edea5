// Draws every chart from its JSON spec (data, not code) with the site's own plotly.js:
// inline in the page, or, for a large campaign, a JSON file the plot names (data-spec).
// A spec finds its plot by comparing data-chart values, never by a selector built from
// them: the key holds the campaign's directory name, which may hold quotes or brackets.
//
// Nothing of it runs before the page is shown: plotly.js (named by this script's
// data-plotly; over a megabyte, a long task of its own when it runs) is fetched only once
// a chart comes near the window, as is a chart's JSON file, and the charts are drawn one
// per task, so the page answers between two of them. A chart never shown (below the part
// read, in a closed section) costs nothing. The table of each chart's numbers is beside it.
(function () {
  "use strict";
  var plotly = document.currentScript && document.currentScript.getAttribute("data-plotly");
  var config = { responsive: true, displaylogo: false, showSendToCloud: false };
  var loading = null;
  var queue = [];
  var drawing = false;

  function loadPlotly() {
    if (!loading) {
      loading = new Promise(function (resolve, reject) {
        if (window.Plotly) return resolve();
        var script = document.createElement("script");
        script.src = plotly;
        script.onload = function () { resolve(); };
        script.onerror = function () { reject(new Error(plotly + ": not loaded")); };
        document.body.appendChild(script);
      });
    }
    return loading;
  }
  function fail(target, error) {
    // Say so where the chart should be; the table of its numbers stays below.
    target.textContent = target.getAttribute("data-failed") || "chart unavailable";
    console.error("chart not drawn:", error.message);
  }
  function plot(target, figure) {
    if (target.getAttribute("data-drawn")) return;
    Plotly.newPlot(target, figure.data, figure.layout, config);
    // Drawn, the box holds plotly's controls (buttons, links): a named group, not an
    // image, whose content would be presentational (axe: nested-interactive).
    target.setAttribute("role", "group");
    target.setAttribute("data-drawn", "1");
  }
  function next() {
    // One chart per task, never in the task that ran plotly.js: a page of several charts
    // is no one long task, and the page answers between two of them.
    if (drawing || !queue.length) return;
    drawing = true;
    setTimeout(function () {
      var item = queue.shift();
      try {
        plot(item[0], item[1]);
      } catch (error) {
        fail(item[0], error);
      }
      drawing = false;
      next();
    }, 0);
  }
  function reserve(target, figure) {
    // The box keeps the chart's own height, from before plotly.js has arrived: the page
    // does not move when it is drawn, and resizing the window makes plotly size the
    // chart to its box, which CSS alone gives only a minimum height.
    if (figure.layout && figure.layout.height) target.style.height = figure.layout.height + "px";
    return figure;
  }
  function figureOf(target, inline) {
    var source = target.getAttribute("data-spec");
    if (source) {
      return fetch(source).then(function (response) {
        if (!response.ok) throw new Error(source + ": HTTP " + response.status);
        return response.json();
      });
    }
    return Promise.resolve(JSON.parse(inline.textContent));
  }
  function start() {
    var targets = new Map();
    var specs = new Map();
    document.querySelectorAll("script.sg-chart-spec").forEach(function (spec) {
      var key = spec.getAttribute("data-chart");
      if (!specs.has(key)) specs.set(key, spec);
    });
    var plots = [];
    document.querySelectorAll("div.sg-plot[data-chart]").forEach(function (target) {
      var key = target.getAttribute("data-chart");
      var first = !targets.has(key);
      if (first) targets.set(key, target);
      // A plot draws from its own file, or from the inline spec of its key (the first
      // plot of a key only).
      if (target.getAttribute("data-spec") || (first && specs.has(key))) {
        plots.push([target, specs.get(key)]);
      }
    });
    if (!plots.length) return;
    function draw(target, inline) {
      Promise.all([loadPlotly(), figureOf(target, inline).then(function (figure) {
        return reserve(target, figure);
      })])
        .then(function (loaded) {
          queue.push([target, loaded[1]]);
          next();
        })
        .catch(function (error) { fail(target, error); });
    }
    if (!("IntersectionObserver" in window)) {
      plots.forEach(function (item) { draw(item[0], item[1]); });
      return;
    }
    var inlineOf = new Map(plots);
    // Near the window: a chart is under way shortly before it scrolls into view.
    var observer = new IntersectionObserver(function (entries) {
      entries.forEach(function (entry) {
        if (!entry.isIntersecting) return;
        observer.unobserve(entry.target);
        draw(entry.target, inlineOf.get(entry.target));
      });
    }, { rootMargin: "200px 0px" });
    plots.forEach(function (item) { observer.observe(item[0]); });
  }
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
