/* A person's game against a bot (/play/ID): the board, clicks, the clocks, one websocket.
 *
 * The server sends the game's whole view on every change (arena/league/challenges.py,
 * BrowserIO.view): the engine's SVG of the position (the same drawing the replay viewer shows,
 * cells as <g data-cell="NAME">), the legal next actions when it is the person's turn, both
 * clocks, the last message and the result. The page sends {"line": TEXT, "ask": N}: an action in
 * the game's notation answering prompt N, "resign", or "" to end a turn early.
 *
 * Clicks become actions by the legal list alone, whatever the game: an action is the cells it
 * names (e5, -e5, c4-c7, a8a5); a click picks a cell, and the action is sent once one legal
 * action matches the cells picked (a stripe may be picked from either end; clicking a picked
 * cell again plays the one-cell action there). Actions without cells (a number, pass, ----) are
 * buttons. A click no legal action explains is sent as it is, so the game itself says why it is
 * illegal. Text from the server is written with textContent, except the engine's SVG.
 */
(function () {
  "use strict";

  var CELL = /[a-z]+[0-9]+/g;
  var root = document.getElementById("play");
  if (!root) return;
  var data = JSON.parse(document.getElementById("play-data").textContent);
  var board = document.getElementById("board");
  var statusBox = document.getElementById("status");
  var messageBox = document.getElementById("message");
  var choices = document.getElementById("choices");
  var lineForm = document.getElementById("line-form");
  var lineInput = document.getElementById("line");
  var endTurn = document.getElementById("end-turn");
  var clearButton = document.getElementById("clear");
  var resignButton = document.getElementById("resign");
  var resultBox = document.getElementById("result");
  var helpText = document.getElementById("help");
  var movesList = document.getElementById("moves");
  var clockCells = [document.getElementById("clock0"), document.getElementById("clock1")];
  var rows = [document.getElementById("player0"), document.getElementById("player1")];

  var view = null;
  var receivedAt = 0;
  var picked = [];
  var socket = null;
  var boardMarkup = null;
  var retries = 0;

  function cellsOf(action) { return action.match(CELL) || []; }
  function reversible(action) { return /[0-9]-[a-z]/.test(action); }
  function same(a, b) {
    if (a.length !== b.length) return false;
    for (var i = 0; i < a.length; i++) if (a[i] !== b[i]) return false;
    return true;
  }
  function startsWith(cells, seq) { return same(cells.slice(0, seq.length), seq); }
  // the orientations of an action's cells the person may pick in
  function orders(action) {
    var cells = cellsOf(action);
    return reversible(action) ? [cells, cells.slice().reverse()] : [cells];
  }
  function fitting(seq) {
    return view.legal.filter(function (a) {
      return orders(a).some(function (c) { return c.length >= seq.length && startsWith(c, seq); });
    });
  }

  function fmtClock(value) {
    if (value === null || value === undefined) return "\u2013";
    var v = Math.max(0, Number(value));
    var m = Math.floor(v / 60);
    var s = v - m * 60;
    if (v < 10) return v.toFixed(1) + " s";
    return m + ":" + (s < 10 ? "0" : "") + Math.floor(s);
  }

  function send(line) {
    if (!socket || socket.readyState !== 1 || !view) return;
    socket.send(JSON.stringify({ line: line, ask: view.ask }));
    picked = [];
    messageBox.textContent = "";
  }

  function clickable() { return view && view.asking && !view.result; }

  function onCell(name) {
    if (!view) return;
    if (!clickable()) {
      say(view.result ? "the game is over" : "wait for your turn", true);
      return;
    }
    if (picked.length === 1 && picked[0] === name) {
      var single = view.legal.filter(function (a) { return same(cellsOf(a), [name]); });
      if (single.length === 1) { send(single[0]); return; }
      picked = [];
      draw();
      return;
    }
    var seq = picked.concat([name]);
    var cands = fitting(seq);
    if (!cands.length && picked.length) { seq = [name]; cands = fitting(seq); }
    if (!cands.length) { send(name); return; } // the game says why
    var exact = cands.filter(function (a) { return cellsOf(a).length === seq.length; });
    if (exact.length === 1 && cands.length === 1) { send(exact[0]); return; }
    picked = seq;
    draw();
  }

  function say(text, bad) {
    messageBox.textContent = text || "";
    messageBox.classList.toggle("error", !!bad);
  }

  // the cells a click can continue with: first cells, or what completes the picked ones
  function targets() {
    var out = {};
    if (!clickable()) return out;
    view.legal.forEach(function (a) {
      orders(a).forEach(function (c) {
        if (c.length > picked.length && startsWith(c, picked)) out[c[picked.length]] = true;
      });
    });
    if (picked.length === 1 && view.legal.some(function (a) {
      return same(cellsOf(a), picked);
    })) out[picked[0]] = true;
    return out;
  }

  function drawBoard() {
    if (view.board !== boardMarkup) {
      board.innerHTML = view.board; // the engine's SVG, not text from a bot
      board.querySelectorAll("svg > title").forEach(function (t) { t.remove(); });
      boardMarkup = view.board;
    }
    var groups = board.querySelectorAll("g[data-cell]");
    var open = targets();
    board.querySelectorAll(".play-dot").forEach(function (d) { d.remove(); });
    var marks = {};
    (view.marks || []).forEach(function (c) { marks[c] = "arena-last"; });
    (view.chosen || []).forEach(function (c) { marks[c] = "arena-turn"; });
    groups.forEach(function (g) {
      var name = g.getAttribute("data-cell");
      g.classList.remove("arena-last", "arena-turn", "play-legal", "play-picked");
      if (marks[name]) g.classList.add(marks[name]);
      if (open[name]) {
        g.classList.add("play-legal");
        dot(g);
      }
      if (picked.indexOf(name) >= 0) g.classList.add("play-picked");
      if (open[name] || picked.indexOf(name) >= 0 || marks[name]) g.parentNode.appendChild(g);
    });
  }

  // a dot in the middle of a cell that can be clicked (an outline on every cell of a board
  // where all are legal would look like a second grid)
  function dot(g) {
    var shape = g.firstElementChild;
    if (!shape || !shape.getBBox) return;
    var box = shape.getBBox();
    var c = document.createElementNS("http://www.w3.org/2000/svg", "circle");
    c.setAttribute("class", "play-dot");
    c.setAttribute("cx", String(box.x + box.width / 2));
    c.setAttribute("cy", String(box.y + box.height / 2));
    c.setAttribute("r", String(Math.min(box.width, box.height) * 0.14));
    g.appendChild(c);
  }

  function drawChoices() {
    choices.textContent = "";
    if (!clickable()) return;
    var plain = view.legal.filter(function (a) { return !cellsOf(a).length; });
    plain.forEach(function (a) {
      var b = document.createElement("button");
      b.type = "button";
      b.className = "play-choice";
      b.textContent = a;
      b.addEventListener("click", function () { send(a); });
      choices.appendChild(b);
    });
  }

  function drawClocks() {
    if (!view) return;
    var now = performance.now();
    for (var s = 0; s < 2; s++) {
      var value = view.clocks[s];
      if (view.running === s && value !== null) value -= (now - receivedAt) / 1000;
      clockCells[s].textContent = fmtClock(value);
      rows[s].classList.toggle("play-running", view.running === s);
    }
  }

  function drawScores() {
    for (var s = 0; s < 2; s++) {
      document.getElementById("score" + s).textContent =
        view.scores && view.scores[s] !== null && view.scores[s] !== undefined
          ? String(view.scores[s]) : "";
    }
  }

  function drawStatus() {
    var you = view.players[view.you];
    var other = view.players[1 - view.you];
    if (view.result) {
      statusBox.textContent = "Game over";
    } else if (view.asking) {
      var left = view.actions_remaining;
      statusBox.textContent = "Your turn (" + you.colour + "): " + (view.can_end_turn
        ? "an optional action, or end the turn" : left + " action" + (left === 1 ? "" : "s") +
        " to play") + (picked.length ? "; picked " + picked.join(" ") : "");
    } else if (view.running === view.you) {
      statusBox.textContent = "Your turn (" + you.colour + ")";
    } else {
      statusBox.textContent = other.name + " (" + other.colour + ") is thinking\u2026";
    }
    if (view.message) say(view.message, view.error);
    else if (!picked.length) say("", false);
  }

  function drawMoves() {
    movesList.textContent = "";
    view.moves.forEach(function (m) {
      var li = document.createElement("li");
      li.textContent = view.players[m.seat].colour + ": " + (m.actions.join(" ") || "\u2013");
      movesList.appendChild(li);
    });
  }

  function drawResult() {
    var r = view.result;
    resultBox.hidden = !r && !view.final;
    resultBox.textContent = "";
    if (!r && !view.final) return;
    var line = document.createElement("p");
    line.className = "play-result-line";
    if (r) {
      var words = { win: "You win", loss: "You lose", draw: "Draw" };
      line.textContent = (words[r.you] || r.result) + " (" + r.result + ", " +
        (r.reason_text || r.reason) + ")";
    } else {
      line.textContent = "The game could not be finished";
    }
    resultBox.appendChild(line);
    if (r && r.detail) {
      var detail = document.createElement("p");
      detail.textContent = r.detail;
      resultBox.appendChild(detail);
    }
    if (view.recorded) {
      var link = document.createElement("a");
      link.href = view.game_url;
      link.id = "replay-link";
      link.textContent = "Open the replay (unrated game " + view.game_id + ")";
      resultBox.appendChild(link);
    } else if (r) {
      resultBox.appendChild(document.createTextNode("recording\u2026"));
    }
  }

  function draw() {
    if (!view) return;
    drawBoard();
    drawChoices();
    drawStatus();
    drawScores();
    drawClocks();
    drawResult();
    endTurn.hidden = !(clickable() && view.can_end_turn);
    clearButton.hidden = !(clickable() && picked.length);
    resignButton.disabled = !!view.result || !!view.final;
    // a finished game needs no controls: its result and the link to its replay
    lineForm.hidden = resignButton.hidden = helpText.hidden = !!view.result || !!view.final;
    lineInput.disabled = sendDisabled();
    document.getElementById("send").disabled = sendDisabled();
    root.setAttribute("data-ask", view.asking ? String(view.ask) : "");
    root.setAttribute("data-picked", picked.join(" "));
    root.setAttribute("data-state", view.final ? "final" : view.result ? "over" :
      view.asking ? "asking" : "waiting");
  }

  function sendDisabled() { return !!view.result || !!view.final; }

  function receive(next) {
    if (next.board === null && view) next.board = view.board; // unchanged: not sent again
    var movesChanged = !view || next.moves.length !== view.moves.length;
    if (!view || next.ask !== view.ask) picked = [];
    view = next;
    receivedAt = performance.now();
    if (view.players) {
      rows.forEach(function (row, s) {
        var p = view.players[s];
        var cell = row.querySelector(".play-name");
        cell.textContent = p.colour + ": " + p.name + (s === view.you ? " (you)" : "");
        var tc = document.createElement("span");
        tc.className = "play-tc";
        tc.textContent = " " + p.clock;
        cell.appendChild(tc);
      });
    }
    if (movesChanged) drawMoves();
    draw();
  }

  function connect() {
    var scheme = location.protocol === "https:" ? "wss://" : "ws://";
    socket = new WebSocket(scheme + location.host + data.ws);
    socket.addEventListener("open", function () { retries = 0; });
    socket.addEventListener("message", function (e) { receive(JSON.parse(e.data)); });
    socket.addEventListener("close", function (e) {
      socket = null;
      if (view && view.final) return;
      if (e.code === 1008) { // refused: the game is over here, or not this person's
        statusBox.textContent = (e.reason || "this game cannot be played here") + ". ";
        var link = document.createElement("a");
        link.href = "/games/" + data.game_id;
        link.textContent = "See the game's page.";
        statusBox.appendChild(link);
        return;
      }
      statusBox.textContent = "connection lost; reconnecting\u2026";
      retries += 1;
      if (retries > 30) { statusBox.textContent = "connection lost; reload the page"; return; }
      setTimeout(connect, Math.min(5000, 500 * retries));
    });
  }

  board.addEventListener("click", function (e) {
    var g = e.target.closest && e.target.closest("g[data-cell]");
    if (g && board.contains(g)) onCell(g.getAttribute("data-cell"));
  });
  lineForm.addEventListener("submit", function (e) {
    e.preventDefault();
    var text = lineInput.value.trim();
    if (!text) return;
    send(text);
    lineInput.value = "";
  });
  endTurn.addEventListener("click", function () { send(""); });
  clearButton.addEventListener("click", function () { picked = []; draw(); });
  resignButton.addEventListener("click", function () {
    if (window.confirm("Resign this game?")) send("resign");
  });
  setInterval(drawClocks, 100);
  connect();
})();
