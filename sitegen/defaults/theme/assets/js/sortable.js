// Tables sorted by the reader (the home page's overview): each column header holds a
// button; a click sorts the rows by that column's cells (their data-sort value, numbers
// as numbers, text by the page's language), ascending, then descending on the next click.
// Cells without a value go last either way. Only rows move: no text is created.
(function () {
  "use strict";
  var collator = new Intl.Collator(document.documentElement.lang || undefined, { numeric: true });
  function value(cell) {
    var raw = cell.hasAttribute("data-sort") ? cell.getAttribute("data-sort") : cell.textContent;
    return raw.trim();
  }
  function sort(table, header, index, numeric) {
    var body = table.tBodies[0];
    var ascending = header.getAttribute("aria-sort") !== "ascending";
    table.querySelectorAll("thead th[aria-sort]").forEach(function (th) {
      th.setAttribute("aria-sort", "none");
    });
    header.setAttribute("aria-sort", ascending ? "ascending" : "descending");
    var rows = Array.prototype.slice.call(body.rows);
    rows.sort(function (a, b) {
      var x = value(a.cells[index]), y = value(b.cells[index]);
      if (x === "" || y === "") return x === y ? 0 : x === "" ? 1 : -1;
      var order = numeric ? parseFloat(x) - parseFloat(y) : collator.compare(x, y);
      return ascending ? order : -order;
    });
    rows.forEach(function (row) { body.appendChild(row); });
  }
  document.querySelectorAll("table button.sg-sort").forEach(function (button) {
    var header = button.closest("th");
    var table = button.closest("table");
    button.addEventListener("click", function () {
      sort(table, header, header.cellIndex, button.getAttribute("data-sort-type") === "number");
    });
  });
})();
