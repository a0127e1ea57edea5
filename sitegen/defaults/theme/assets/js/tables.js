// Pages of a long table (a large campaign's chart numbers): each page is a JSON file of
// rows of display strings, shown with textContent only. The first page is in the HTML.
(function () {
  "use strict";
  document.querySelectorAll(".sg-table-pages[data-pages]").forEach(function (root) {
    var base = root.getAttribute("data-base");
    var records = root.getAttribute("data-records");
    var pages = root.getAttribute("data-pages").split(" ");
    var body = root.querySelector("tbody");
    function cell(tag, text, className) {
      var node = document.createElement(tag);
      if (className) node.className = className;
      node.textContent = text;
      return node;
    }
    function show(page) {
      fetch(base + pages[page])
        .then(function (response) { return response.json(); })
        .then(function (rows) {
          body.replaceChildren();
          rows.forEach(function (row) {
            var tr = document.createElement("tr");
            var link = document.createElement("a");
            link.href = records + row[1];
            link.textContent = row[0];
            var first = document.createElement("td");
            first.appendChild(link);
            tr.appendChild(first);
            tr.appendChild(cell("td", row[2]));
            tr.appendChild(cell("td", row[3]));
            tr.appendChild(cell("td", row[4], "sg-num"));
            tr.appendChild(cell("td", row[5], "sg-num"));
            tr.appendChild(cell("td", row[6], "sg-num"));
            tr.appendChild(cell("td", row[7]));
            body.appendChild(tr);
          });
          root.querySelectorAll(".sg-table-pager button").forEach(function (button) {
            button.setAttribute("aria-current", button.getAttribute("data-page") === String(page) ? "page" : "false");
          });
        })
        .catch(function () { body.replaceChildren(cell("tr", root.getAttribute("data-failed"))); });
    }
    root.querySelectorAll(".sg-table-pager button").forEach(function (button) {
      button.addEventListener("click", function () { show(parseInt(button.getAttribute("data-page"), 10)); });
    });
  });
})();
