/* arena replay viewer.
 *
 * ArenaViewer.mount(element, data) shows replay data (arena/viewer/replay.py, format
 * arena-replay/1) in an element: the board, stepping by action and by turn (buttons, keyboard,
 * slider, the move list), the last action marked on the board, scores, clocks, the bots' logs
 * of the turn and the result. Elements with a data-arena-replay="ID" attribute are mounted
 * automatically from the JSON text of the script element (type application/json) whose id is ID.
 * A game in flight grows: `viewer.append(steps)` adds the steps of new turns (a viewer showing
 * the last step follows them), as the league's live pages do.
 *
 * Where it opens: at the step the address names (`#step=N`, or `#end`), else where the
 * element's data-start says ("end", or a step number; a page whose headline already gives the
 * result opens at the end), else at the start. An element with data-arena-hash keeps the
 * address at the step shown once someone steps (`#step=N`, replaced, not pushed), so a
 * position can be linked, and follows the address when it changes.
 *
 * Beside each step: the log lines, the stderr lines and the debug marks of the turn it shows
 * (data.logs, data.stderr, data.marks, each keyed by its turn; step 0 shows those from before
 * the first turn). Marks are drawn over the board in a layer of their own, one toggle per seat
 * (on unless the element says data-marks="off"); their colours are words of a closed list
 * (protocol/marks.py) looked up here, never CSS from the data.
 *
 * Every text that came from a bot (names, logs, marks, stderr, actions, details) is written
 * with textContent, never as markup. Only the board SVG and its cell groups, which the engine
 * drew, are markup. No network access, no dependencies.
 */
(function () {
  "use strict";

  var CELL_NAME = /[a-z]+[0-9]+/g;
  // the players' colours as the engines draw them (arena/games), for the legend
  var SWATCHES = {
    pink: "#f49ac1", black: "#222222", dark: "#222222", light: "#f8f8f8",
    red: "#d62728", blue: "#1f77b4", X: "#222222", O: "#f8f8f8",
  };
  // the colours a debug mark may name (protocol/marks.py COLOURS); anything else: yellow
  var MARK_COLOURS = {
    red: "#d62728", orange: "#ff7f0e", yellow: "#f2c80f", green: "#2ca02c", teal: "#17becf",
    blue: "#1f77b4", purple: "#9467bd", pink: "#e377c2", white: "#ffffff", black: "#111111",
    grey: "#7f7f7f",
  };
  var SVG_NS = "http://www.w3.org/2000/svg";
  // the viewer the keyboard drives: the last one mounted or clicked
  var active = null;

  function own(map, key) {
    return Object.prototype.hasOwnProperty.call(map, key);
  }

  // what a step's extras are filed under: its turn, or "start" before the first turn
  function turnKey(turn) {
    return turn === null || turn === undefined ? "start" : String(turn);
  }

  // data.logs, data.marks or data.stderr by turn key
  function byTurn(items) {
    var out = {};
    (items || []).forEach(function (item) {
      var k = turnKey(item.turn);
      (out[k] = out[k] || []).push(item);
    });
    return out;
  }

  function svgEl(tag, attrs) {
    var node = document.createElementNS(SVG_NS, tag);
    Object.keys(attrs).forEach(function (k) { node.setAttribute(k, String(attrs[k])); });
    return node;
  }

  function el(tag, cls, text) {
    var node = document.createElement(tag);
    if (cls) node.className = cls;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function fmtClock(value) {
    if (value === null || value === undefined) return "\u2013";
    var v = Number(value);
    if (v >= 60) {
      var m = Math.floor(v / 60);
      var s = v - m * 60;
      return m + ":" + (s < 10 ? "0" : "") + s.toFixed(1);
    }
    return v.toFixed(2) + " s";
  }

  function fmtElapsed(value) {
    if (value === null || value === undefined) return "";
    var v = Number(value);
    return v < 1 ? (v * 1000).toFixed(1) + " ms" : v.toFixed(2) + " s";
  }

  // a stored timestamp (2026-01-31T12:34:56.789Z) as the league's pages write every one
  function fmtTime(iso) {
    var m = /^(\d{4}-\d\d-\d\d)[T ](\d\d:\d\d)/.exec(String(iso || ""));
    return m ? m[1] + " " + m[2] + " UTC" : String(iso || "");
  }

  function resultText(data) {
    var r = data.result || {};
    if (!r.result) return "no result recorded";
    var who = "draw";
    if (r.winner === 0 || r.winner === 1) {
      var p = data.players[r.winner];
      who = p.colour + " (" + p.name + ") wins";
    }
    // the reason in words (replay.py's reason_text); older replay data has only the code
    var why = r.reason_text || String(r.reason || "").replace(/_/g, " ");
    var text = r.result + " \u00b7 " + who + (why ? " \u00b7 " + why : "");
    if (r.scores) text += "; scores " + r.scores.join("-");
    return text;
  }

  // the step an address names: "#step=12" -> 12, "#end" -> last; null for none
  function stepFromHash(hash, last) {
    if (hash === "#end") return last;
    var m = /^#step=(\d+)$/.exec(hash || "");
    return m ? Math.min(Number(m[1]), last) : null;
  }

  function mount(root, data) {
    var steps = data.steps.slice();
    var n = steps.length;
    root.classList.add("arena-viewer");
    root.textContent = "";

    // --- header -------------------------------------------------------------------------
    root.appendChild(el("h1", null, data.title + ": " + data.players[0].name + " vs " +
      data.players[1].name));
    var opts = Object.keys(data.options || {}).map(function (k) {
      return k + "=" + data.options[k];
    }).join(", ");
    root.appendChild(el("p", "arena-meta", [data.game, opts, "time control " +
      (data.time_control || "?"), "seed " + data.seed, fmtTime(data.started_at)].filter(Boolean)
      .join(" \u00b7 ")));
    var playersBox = el("div", "arena-players");
    var playerNodes = data.players.map(function (p) {
      var node = el("span", "arena-player");
      var sw = el("span", "arena-swatch");
      if (Object.prototype.hasOwnProperty.call(SWATCHES, p.colour)) {
        sw.style.background = SWATCHES[p.colour];
      }
      node.appendChild(sw);
      node.appendChild(el("span", null, p.colour + ": " + p.name +
        (p.version ? " " + p.version : "")));
      playersBox.appendChild(node);
      return node;
    });
    root.appendChild(playersBox);
    var resultBox = el("div", "arena-result");
    resultBox.appendChild(el("div", "arena-result-line", resultText(data)));
    if (data.result && data.result.detail) {
      resultBox.appendChild(el("div", "arena-status", data.result.detail));
    }
    root.appendChild(resultBox);

    // --- board and side panel -------------------------------------------------------------
    var main = el("div", "arena-main");
    var board = el("div", "arena-board");
    board.innerHTML = data.board; // the engine's SVG, not bot text
    // its tooltip describes the first position only; the panel says where the game is
    board.querySelectorAll("svg > title").forEach(function (t) { t.remove(); });
    main.appendChild(board);
    var side = el("div", "arena-side");
    main.appendChild(side);
    root.appendChild(main);

    var controls = el("div", "arena-controls");
    function button(label, title, action) {
      var b = el("button", null, label);
      b.type = "button";
      b.title = title;
      b.setAttribute("aria-label", title);
      b.addEventListener("click", action);
      controls.appendChild(b);
      return b;
    }
    button("|\u2039", "start (Home)", function () { show(0); });
    button("\u00ab", "previous turn (Shift+\u2190, \u2191)", function () { show(prevTurn(pos)); });
    button("\u2039", "previous action (\u2190)", function () { show(pos - 1); });
    button("\u203a", "next action (\u2192)", function () { show(pos + 1); });
    button("\u00bb", "next turn (Shift+\u2192, \u2193)", function () { show(nextTurn(pos)); });
    button("\u203a|", "end (End)", function () { show(n - 1); });
    var slider = el("input", "arena-slider");
    slider.type = "range";
    slider.min = "0";
    slider.max = String(n - 1);
    slider.value = "0";
    slider.setAttribute("aria-label", "step");
    slider.addEventListener("input", function () { show(Number(slider.value)); });
    controls.appendChild(slider);
    var stepNo = el("span", "arena-stepno");
    controls.appendChild(stepNo);
    side.appendChild(controls);

    var stepLine = el("div", "arena-step");
    side.appendChild(stepLine);
    var facts = el("table", "arena-facts");
    var head = el("tr");
    head.appendChild(el("th", null, ""));
    data.players.forEach(function (p) { head.appendChild(el("th", null, p.colour)); });
    facts.appendChild(head);
    function factRow(label) {
      var tr = el("tr");
      tr.appendChild(el("td", null, label));
      var cells = [el("td"), el("td")];
      cells.forEach(function (c) { tr.appendChild(c); });
      facts.appendChild(tr);
      return cells;
    }
    var scoreCells = factRow("score");
    var clockCells = factRow("clock");
    // time banks (docs/record.md): a row only for a game that had them
    var bankCells = steps[0].banks ? factRow("bank") : null;
    side.appendChild(facts);
    var status = el("div", "arena-status");
    side.appendChild(status);
    // debug marks: one toggle per seat that drew any
    var marksOf = byTurn(data.marks);
    var marksShown = [true, true];
    var marksOn = root.getAttribute("data-marks") !== "off";
    var drew = [false, false];
    (data.marks || []).forEach(function (m) { if (m.seat === 0 || m.seat === 1) drew[m.seat] = true; });
    if (drew[0] || drew[1]) {
      var toggles = el("div", "arena-mark-toggles");
      toggles.appendChild(el("span", "arena-status", "marks: "));
      data.players.forEach(function (p, seat) {
        if (!drew[seat]) return;
        var label = el("label");
        var box = el("input");
        box.type = "checkbox";
        box.checked = marksOn;
        box.setAttribute("data-seat", String(seat));
        marksShown[seat] = marksOn;
        box.addEventListener("change", function () {
          marksShown[seat] = box.checked;
          drawMarks();
        });
        label.appendChild(box);
        label.appendChild(el("span", null, " " + p.colour + " (" + p.name + ")"));
        toggles.appendChild(label);
      });
      side.appendChild(toggles);
    }
    side.appendChild(el("h2", null, "Logs of this turn"));
    var logBox = el("div", "arena-logs");
    side.appendChild(logBox);
    var logsOf = byTurn(data.logs);
    // replay data made before logs named their turn: the steps' ranges say which to show
    var logsByRange = (data.logs || []).some(function (l) { return l.turn === undefined; });
    var stderrOf = byTurn(data.stderr);
    var stderrBox = null;
    if (data.stderr && data.stderr.length) {
      side.appendChild(el("h2", null, "stderr of this turn"));
      stderrBox = el("div", "arena-logs arena-stderr");
      side.appendChild(stderrBox);
    }
    side.appendChild(el("h2", null, "Moves"));
    var moves = el("div", "arena-moves");
    side.appendChild(moves);
    side.appendChild(el("p", "arena-help",
      "\u2190 \u2192 action \u00b7 Shift+\u2190 \u2192 or \u2191 \u2193 turn \u00b7 Home End"));

    // --- cells: forward diffs from the data, backward diffs computed once ----------------
    var groups = {};
    board.querySelectorAll("g[data-cell]").forEach(function (g) {
      groups[g.getAttribute("data-cell")] = g;
    });
    var shown = {};
    Object.keys(groups).forEach(function (name) { shown[name] = groups[name].innerHTML; });
    var undo = [undefined];
    var lastOfTurn = [];
    // the undo diffs and turn ends of steps from..n-1 (shown: the cells at the last step)
    function index(from) {
      for (var k = Math.max(from, 1); k < n; k++) {
        var back = {};
        var cells = steps[k].cells || {};
        for (var name in cells) {
          if (!Object.prototype.hasOwnProperty.call(cells, name)) continue;
          back[name] = shown[name];
          shown[name] = cells[name];
        }
        undo[k] = back;
      }
      for (var i = Math.max(from - 1, 0); i < n; i++) {
        lastOfTurn[i] = i === 0 || i === n - 1 || !!steps[i + 1].first_of_turn;
      }
    }
    index(1);

    // --- the move list ---------------------------------------------------------------------
    var moveButtons = [];
    var line = null;
    function addMove(s, i) {
      if (i === 0) {
        var b0 = el("button", null, data.opening_turns ? "after the opening" : "start");
        b0.type = "button";
        b0.addEventListener("click", function () { show(0); });
        moveButtons[0] = b0;
        moves.appendChild(b0);
        return;
      }
      if (s.first_of_turn) {
        line = el("div");
        var who = data.players[s.seat];
        line.appendChild(el("span", null, s.turn + ". " + who.colour + " "));
        moves.appendChild(line);
      }
      var label = s.action !== null && s.action !== undefined ? s.action : "(" + s.note + ")";
      var b = el("button", s.illegal ? "arena-illegal" : null, label);
      b.type = "button";
      b.addEventListener("click", function () { show(i); });
      moveButtons[i] = b;
      line.appendChild(b);
    }
    steps.forEach(addMove);

    function nextTurn(i) {
      var j = Math.min(i + 1, n - 1);
      while (j < n - 1 && !lastOfTurn[j]) j++;
      return j;
    }
    function prevTurn(i) {
      var j = Math.max(i - 1, 0);
      while (j > 0 && !lastOfTurn[j]) j--;
      return j;
    }

    function setCells(cells) {
      for (var name in cells) {
        if (Object.prototype.hasOwnProperty.call(cells, name) && groups[name]) {
          groups[name].innerHTML = cells[name]; // engine markup
        }
      }
    }

    function mark(i) {
      board.querySelectorAll("g.arena-last, g.arena-turn, g.arena-changed").forEach(function (g) {
        g.classList.remove("arena-last", "arena-turn", "arena-changed");
      });
      var s = steps[i];
      // what else the action changed (a stripe's inner cells, captures): outlined lightly
      Object.keys(s.cells || {}).forEach(function (c) {
        if (!groups[c] || i === 0) return;
        groups[c].classList.add("arena-changed");
        groups[c].parentNode.appendChild(groups[c]);
      });
      for (var j = i; j > 0 && steps[j].turn === s.turn; j--) {
        var a = steps[j].action;
        if (a && !steps[j].illegal) {
          (a.match(CELL_NAME) || []).forEach(function (c) {
            var g = groups[c];
            if (!g) return;
            g.classList.remove("arena-changed");
            g.classList.add(j === i ? "arena-last" : "arena-turn");
            g.parentNode.appendChild(g); // drawn last, so no neighbour covers its outline
          });
        }
        if (steps[j].first_of_turn) break;
      }
    }

    // --- debug marks: a layer over the board, redrawn at every step -------------------------
    var svg = board.querySelector("svg");
    var layer = svg ? svgEl("g", { "class": "arena-marks" }) : null;
    var centres = {};
    function centre(name) {
      if (own(centres, name)) return centres[name];
      var g = own(groups, name) ? groups[name] : null;
      var shape = g && (g.firstElementChild || g);
      if (!shape || !shape.getBBox) return null;
      var b = shape.getBBox();
      if (!b.width || !b.height) return null; // not laid out yet: try again next time
      centres[name] = { x: b.x + b.width / 2, y: b.y + b.height / 2, r: Math.min(b.width, b.height) / 2 };
      return centres[name];
    }
    function drawMark(m, seat) {
      var colour = own(MARK_COLOURS, m.colour) ? MARK_COLOURS[m.colour] : MARK_COLOURS.yellow;
      var attrs = { "class": "arena-mark", "data-seat": seat };
      if (Array.isArray(m.arrow)) {
        var a = centre(String(m.arrow[0])), b = centre(String(m.arrow[1]));
        if (!a || !b) return;
        var dx = b.x - a.x, dy = b.y - a.y, len = Math.sqrt(dx * dx + dy * dy) || 1;
        var ux = dx / len, uy = dy / len, w = a.r * 0.16, head = a.r * 0.55;
        var tipX = b.x - ux * b.r * 0.35, tipY = b.y - uy * b.r * 0.35;
        var g = svgEl("g", attrs);
        g.appendChild(svgEl("line", {
          x1: a.x + ux * a.r * 0.3, y1: a.y + uy * a.r * 0.3,
          x2: tipX - ux * head * 0.8, y2: tipY - uy * head * 0.8,
          stroke: colour, "stroke-width": w, "stroke-linecap": "round", opacity: 0.85,
        }));
        g.appendChild(svgEl("polygon", {
          points: [tipX, tipY, tipX - ux * head - uy * head * 0.5, tipY - uy * head + ux * head * 0.5,
            tipX - ux * head + uy * head * 0.5, tipY - uy * head - ux * head * 0.5].join(" "),
          fill: colour, opacity: 0.85,
        }));
        layer.appendChild(g);
        return;
      }
      var c = centre(String(m.cell));
      if (!c) return;
      if (typeof m.text === "string") {
        attrs.x = c.x;
        attrs.y = c.y;
        attrs["text-anchor"] = "middle";
        attrs["dominant-baseline"] = "central";
        attrs["font-size"] = c.r * Math.min(0.8, 3.2 / Math.max(1, m.text.length));
        attrs["font-weight"] = "700";
        attrs.fill = colour;
        attrs.stroke = m.colour === "white" || m.colour === "yellow" ? "#111" : "#fff";
        attrs["stroke-width"] = c.r * 0.12;
        attrs["paint-order"] = "stroke";
        var text = svgEl("text", attrs);
        text.textContent = m.text; // a bot's text: never markup
        layer.appendChild(text);
        return;
      }
      attrs.cx = c.x;
      attrs.cy = c.y;
      attrs.r = c.r * 0.8;
      attrs.fill = colour;
      attrs["fill-opacity"] = 0.35;
      attrs.stroke = colour;
      attrs["stroke-width"] = c.r * 0.12;
      layer.appendChild(svgEl("circle", attrs));
    }
    function drawMarks() {
      if (!layer) return;
      layer.textContent = "";
      svg.appendChild(layer); // over the cells, which mark() may have moved to the end
      var s = steps[pos];
      (marksOf[turnKey(pos === 0 ? null : s.turn)] || []).forEach(function (entry) {
        if (!marksShown[entry.seat]) return;
        (entry.marks || []).forEach(function (m) {
          if (m && typeof m === "object") drawMark(m, entry.seat);
        });
      });
    }

    var pos = 0;
    // the current move in view inside the move list, without scrolling the page itself (a
    // live game adds moves while people read the page)
    function scrollMoves(b) {
      if (!b || !b.getBoundingClientRect) return;
      var r = b.getBoundingClientRect();
      var m = moves.getBoundingClientRect();
      if (r.top < m.top) moves.scrollTop -= m.top - r.top;
      else if (r.bottom > m.bottom) moves.scrollTop += r.bottom - m.bottom;
    }

    function show(target) {
      target = Math.max(0, Math.min(n - 1, Math.round(Number(target) || 0)));
      while (pos < target) { pos++; setCells(steps[pos].cells || {}); }
      while (pos > target) { setCells(undo[pos]); pos--; }
      var s = steps[pos];
      mark(pos);
      slider.value = String(pos);
      stepNo.textContent = pos + "/" + (n - 1);
      stepLine.textContent = "";
      if (pos === 0) {
        stepLine.appendChild(el("span", null, data.opening_turns
          ? "position after the opening (" + data.opening_turns + " turns)" : "start position"));
      } else {
        var p = data.players[s.seat];
        stepLine.appendChild(el("span", null, "turn " + s.turn + ": " + p.colour + " (" +
          p.name + ") "));
        if (s.action !== null && s.action !== undefined) {
          stepLine.appendChild(el("span", s.illegal ? "arena-action arena-illegal" :
            "arena-action", s.action));
          if (s.illegal) stepLine.appendChild(el("span", "arena-illegal", " illegal"));
        } else {
          stepLine.appendChild(el("span", "arena-illegal", s.note));
        }
        var took = s.elapsed_turn !== undefined ? s.elapsed_turn : s.elapsed;
        if (took) stepLine.appendChild(el("span", "arena-status", "  " + fmtElapsed(took)));
        if (s.bank_drawn) {
          stepLine.appendChild(el("span", "arena-status arena-bank",
            "  (" + fmtElapsed(s.bank_drawn) + " from the bank)"));
        }
        var a = s.account;
        if (a) {
          var acct = "  (CPU " + fmtElapsed(a.cpu) + ", wait " + fmtElapsed(a.wait);
          if (a.host) acct += ", host " + fmtElapsed(a.host);
          acct += ", charged " + fmtElapsed(a.charged) + ")";
          stepLine.appendChild(el("span", "arena-status arena-account", acct));
        }
      }
      for (var seat = 0; seat < 2; seat++) {
        scoreCells[seat].textContent = s.scores ? String(s.scores[seat]) : "";
        clockCells[seat].textContent = fmtClock(s.clocks ? s.clocks[seat] : null);
        if (bankCells) bankCells[seat].textContent = fmtClock(s.banks ? s.banks[seat] : null);
        playerNodes[seat].classList.toggle("arena-to-move",
          pos < n - 1 && steps[nextTurn(pos)].seat === seat);
      }
      status.textContent = s.status || "";
      var key = turnKey(pos === 0 ? null : s.turn);
      logBox.textContent = "";
      var shownLogs = logsOf[key] || [];
      if (logsByRange) {
        var range = s.logs || [0, 0];
        shownLogs = (data.logs || []).slice(range[0], range[1]);
      }
      shownLogs.forEach(function (log) {
        var who = data.players[log.seat] || { colour: "?" };
        logBox.appendChild(el("div", log.arena ? "arena-note" : null, "[" +
          Number(log.t).toFixed(3) + " s " + who.colour + "] " + (log.arena ? "arena: " : "") +
          log.message));
      });
      if (stderrBox) {
        stderrBox.textContent = "";
        (stderrOf[key] || []).forEach(function (part) {
          var who = data.players[part.seat] || { colour: "?" };
          stderrBox.appendChild(el("div", null, "[" + who.colour + "] " + part.text));
        });
      }
      drawMarks();
      moveButtons.forEach(function (b, i) { b.classList.toggle("arena-current", i === pos); });
      scrollMoves(moveButtons[pos]);
      resultBox.classList.toggle("arena-at-end", pos === n - 1);
      root.setAttribute("data-step", String(pos));
      if (keepHash && window.history && window.history.replaceState) {
        var address = "#step=" + pos;
        if (window.location.hash !== address) window.history.replaceState(null, "", address);
      }
    }

    function onKey(e) {
      if (e.target === slider) return;
      var next = null;
      if (e.key === "ArrowRight") next = e.shiftKey ? nextTurn(pos) : pos + 1;
      else if (e.key === "ArrowLeft") next = e.shiftKey ? prevTurn(pos) : pos - 1;
      else if (e.key === "ArrowDown" || e.key === "PageDown") next = nextTurn(pos);
      else if (e.key === "ArrowUp" || e.key === "PageUp") next = prevTurn(pos);
      else if (e.key === "Home") next = 0;
      else if (e.key === "End") next = n - 1;
      if (next === null) return;
      e.preventDefault();
      show(next);
    }

    // steps of turns played since (a live game): indexed, listed, followed from the end
    function append(more) {
      if (!more || !more.length) return;
      var follow = pos === n - 1;
      var from = n;
      more.forEach(function (s) { steps.push(s); });
      n = steps.length;
      index(from);
      for (var i = from; i < n; i++) addMove(steps[i], i);
      slider.max = String(n - 1);
      viewer.count = n;
      show(follow ? n - 1 : pos);
    }

    var start = stepFromHash(window.location.hash, n - 1);
    if (start === null) {
      var wanted = root.getAttribute("data-start");
      start = wanted === "end" ? n - 1 : Number(wanted) || 0;
    }
    var keepHash = false; // the address stays as it was opened until someone steps
    show(start);
    keepHash = root.hasAttribute("data-arena-hash");
    if (keepHash) {
      window.addEventListener("hashchange", function () {
        var target = stepFromHash(window.location.hash, n - 1);
        if (target !== null && target !== pos) show(target);
      });
    }
    var viewer = {
      append: append,
      onKey: onKey,
      show: show,
      count: n,
      position: function () { return pos; },
      nextTurn: function () { show(nextTurn(pos)); },
      prevTurn: function () { show(prevTurn(pos)); },
    };
    root.addEventListener("pointerdown", function () { active = viewer; });
    root.addEventListener("focusin", function () { active = viewer; });
    active = viewer;
    window.arenaViewers = window.arenaViewers || [];
    window.arenaViewers.push(viewer);
    return viewer;
  }

  function mountAll() {
    document.querySelectorAll("[data-arena-replay]").forEach(function (node) {
      var source = document.getElementById(node.getAttribute("data-arena-replay"));
      if (source) mount(node, JSON.parse(source.textContent));
    });
  }

  document.addEventListener("keydown", function (e) {
    if (!active || e.altKey || e.ctrlKey || e.metaKey) return;
    var t = e.target && e.target.tagName;
    if (t === "TEXTAREA" || t === "SELECT" || (t === "INPUT" && e.target.type !== "range")) return;
    active.onKey(e);
  });

  window.ArenaViewer = { mount: mount, mountAll: mountAll };
  if (document.readyState === "loading") {
    document.addEventListener("DOMContentLoaded", mountAll);
  } else {
    mountAll();
  }
})();
