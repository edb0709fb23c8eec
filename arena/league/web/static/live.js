/* League pages that update by themselves, over server-sent events (arena/league/web/sse.py).
 *
 * [data-events="URL"]: a block the server renders again when it changes (a submission's
 * status); each "status" event carries the new block, rendered and escaped by the server, and
 * "end" closes the stream. Without JavaScript these pages refresh themselves instead.
 */
(function () {
  "use strict";

  function followBlock(node) {
    var source = new EventSource(node.getAttribute("data-events"));
    source.addEventListener("status", function (e) {
      var data = JSON.parse(e.data);
      node.innerHTML = data.html; // server-rendered template, escaped there
      node.setAttribute("data-state", data.state);
    });
    source.addEventListener("end", function () {
      source.close();
      var hint = document.getElementById("reload-hint");
      if (hint) hint.remove();
    });
  }

  function start() {
    document.querySelectorAll("[data-events]").forEach(followBlock);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
