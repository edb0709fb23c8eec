/* League pages that update by themselves, over server-sent events (arena/league/web/sse.py).
 *
 * [data-events="URL"]: a block the server renders again when it changes (a submission's
 * status; the games in flight on /live and the home page's counts, games in flight and recent
 * games); each "status" event carries the new block, rendered and escaped by the server, and
 * "end" closes the stream. Without JavaScript these pages are the snapshot they were made as
 * (a submission's page refreshes itself instead).
 *
 * [data-live-game="URL"]: a game in flight (arena/league/web/live.py). "start" mounts the
 * shared viewer (ArenaViewer, /static/viewer/viewer.js) on the replay so far, "steps" appends
 * the steps of new turns (the viewer follows them while it shows the last step), "end"
 * reloads the page, which then shows the recorded replay. Bot text is only ever data here:
 * the viewer writes it with textContent.
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

  function lastTurn(steps) {
    for (var i = steps.length - 1; i >= 0; i--) if (steps[i].turn !== null) return steps[i].turn;
    return 0;
  }

  function followGame(node) {
    var status = node.querySelector("[data-live-status]");
    var box = node.querySelector("[data-live-viewer]");
    var viewer = null;
    var steps = [];
    var source = new EventSource(node.getAttribute("data-live-game"));
    function say(text, live) {
      status.textContent = "";
      if (live) {
        var dot = document.createElement("span");
        dot.className = "live-dot";
        status.appendChild(dot);
      }
      status.appendChild(document.createTextNode(text));
    }
    function progress() {
      node.setAttribute("data-live-steps", String(steps.length));
      var turn = lastTurn(steps);
      var actions = steps.filter(function (x) { return x.action; }).length;
      say(" live: turn " + turn + (actions !== turn ? " (" + actions + " actions)" : ""), true);
      var line = box.querySelector(".arena-result-line");
      if (line) line.textContent = "game in progress";
      box.classList.add("live-in-progress");
    }
    source.addEventListener("start", function (e) {
      var data = JSON.parse(e.data);
      if (viewer && data.steps.length >= steps.length) {
        // a reconnection: the same game, perhaps further on
        var more = data.steps.slice(steps.length);
        steps = steps.concat(more);
        viewer.append(more);
      } else {
        steps = data.steps.slice();
        viewer = window.ArenaViewer.mount(box, data);
        viewer.show(steps.length - 1);
      }
      progress();
    });
    source.addEventListener("steps", function (e) {
      var data = JSON.parse(e.data);
      if (!viewer || data.from !== steps.length) {
        source.close();
        window.location.reload(); // out of step: start again from the page
        return;
      }
      steps = steps.concat(data.steps);
      viewer.append(data.steps);
      progress();
    });
    source.addEventListener("waiting", function () {
      say("waiting for a free slot\u2026", false);
    });
    source.addEventListener("remote", function () {
      source.close();
      say("played by a remote worker: not shown live; reload when it is over", false);
    });
    source.addEventListener("unavailable", function (e) {
      say("the live view of this game failed (" + JSON.parse(e.data).reason +
        "); its replay appears when it is over", false);
    });
    source.addEventListener("end", function () {
      source.close();
      say("game over: loading the replay\u2026", false);
      // the same page again, now with the record, which it opens at its last step (the
      // game page's data-start), where the live view was
      window.location.replace(window.location.pathname);
    });
  }

  function start() {
    document.querySelectorAll("[data-events]").forEach(followBlock);
    document.querySelectorAll("[data-live-game]").forEach(followGame);
  }

  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", start);
  } else {
    start();
  }
})();
