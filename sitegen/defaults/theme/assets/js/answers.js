// Per-answer browser: loads one page of answers (a JSON shard) at a time and shows the
// texts with textContent only — model output is data, never markup.
(function () {
  "use strict";
  var root = document.querySelector(".sg-answers-browser");
  if (!root) return;
  var base = root.getAttribute("data-base");
  var pageSize = parseInt(root.getAttribute("data-page-size"), 10);
  var pages = parseInt(root.getAttribute("data-pages"), 10);
  var labels = JSON.parse(document.getElementById("sg-answers-labels").textContent);
  var list = root.querySelector(".sg-answers-list");
  var status = root.querySelector(".sg-answers-status");
  var goto = root.querySelector(".sg-answers-goto");
  var current = 0;

  function element(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (tag === "pre") node.tabIndex = 0; // a long answer scrolls: reachable by keyboard
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function show(page, openIndex) {
    page = Math.max(0, Math.min(pages - 1, page));
    current = page;
    goto.value = String(page + 1);
    root.querySelectorAll(".sg-answers-pager [data-step]").forEach(function (button) {
      var step = button.getAttribute("data-step");
      button.disabled = (step === "first" || step === "previous") ? page === 0 : page === pages - 1;
    });
    status.textContent = labels.loading;
    fetch(base + page + ".json")
      .then(function (response) { return response.json(); })
      .then(function (answers) {
        if (page !== current) return; // a later page was asked for meanwhile
        list.replaceChildren();
        answers.forEach(function (answer) {
          var details = element("details", "sg-answer");
          details.id = "t" + answer.order_index;
          var parts = [labels["role." + answer.role], labels["status." + answer.status]];
          if (answer.finish) parts.push(labels["finish." + answer.finish], answer.generated_tokens + " tok");
          var summary = element("summary", "", answer.trial_id + " — " + parts.join(", "));
          details.appendChild(summary);
          if (answer.failure_reason) details.appendChild(element("p", "sg-failure", answer.failure_reason));
          if (answer.reasoning_text) {
            details.appendChild(element("p", "sg-label", labels.reasoning));
            details.appendChild(element("pre", "sg-text", answer.reasoning_text));
          }
          details.appendChild(element("p", "sg-label", labels.text));
          details.appendChild(element("pre", "sg-text", answer.text));
          if (answer.order_index === openIndex) details.open = true;
          list.appendChild(details);
        });
        status.textContent = labels.page.replace("{page}", page + 1).replace("{pages}", pages);
        root.querySelectorAll(".sg-answers-pager [data-page]").forEach(function (button) {
          button.setAttribute("aria-current", button.getAttribute("data-page") === String(page) ? "page" : "false");
        });
        if (openIndex !== undefined) {
          var target = document.getElementById("t" + openIndex);
          if (target) target.scrollIntoView();
        }
      })
      .catch(function () { status.textContent = labels.failed; });
  }

  root.querySelectorAll(".sg-answers-pager [data-page]").forEach(function (button) {
    button.addEventListener("click", function () { show(parseInt(button.getAttribute("data-page"), 10)); });
  });
  var steps = {
    first: function () { return 0; },
    previous: function () { return current - 1; },
    next: function () { return current + 1; },
    last: function () { return pages - 1; }
  };
  root.querySelectorAll(".sg-answers-pager [data-step]").forEach(function (button) {
    button.addEventListener("click", function () { show(steps[button.getAttribute("data-step")]()); });
  });
  goto.addEventListener("change", function () {
    var page = parseInt(goto.value, 10);
    if (!isNaN(page)) show(page - 1);
  });
  var match = /^#t(\d+)$/.exec(window.location.hash);
  if (match) {
    var index = parseInt(match[1], 10);
    show(Math.floor(index / pageSize), index);
  } else {
    show(0);
  }
})();
