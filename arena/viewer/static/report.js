/* arena tournament report: open an embedded replay (#game-N) in the viewer (viewer.js).
 *
 * Replays are embedded as base64 of gzipped JSON, unpacked with the browser's own
 * DecompressionStream, so a report of hundreds of games stays one small file. */
(function () {
  "use strict";

  var packed = {};
  var source = document.getElementById("arena-replays");
  if (source) packed = JSON.parse(source.textContent);
  var section = document.getElementById("replay");
  var box = section && section.querySelector(".arena-replay-box");
  var label = section && section.querySelector(".arena-replay-id");
  var openRow = null;

  function unpack(text) {
    var bytes = Uint8Array.from(atob(text), function (c) { return c.charCodeAt(0); });
    var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
    return new Response(stream).text().then(JSON.parse);
  }

  function open(key) {
    if (!section || !Object.prototype.hasOwnProperty.call(packed, key)) return;
    unpack(packed[key]).then(function (data) {
      var root = document.createElement("div");
      root.setAttribute("data-start", "end"); // the viewer's header gives the result
      box.textContent = "";
      box.appendChild(root);
      window.ArenaViewer.mount(root, data);
      var row = document.getElementById("row-" + key);
      if (openRow) openRow.classList.remove("arena-open");
      if (row) {
        row.classList.add("arena-open");
        label.textContent = row.cells[0].textContent;
      }
      openRow = row;
      section.hidden = false;
      section.setAttribute("data-open", key);
      section.scrollIntoView({ block: "start" });
    }).catch(function (err) {
      box.textContent = "This replay cannot be shown: " + err;
      section.hidden = false;
    });
  }

  function route() {
    var key = window.location.hash.replace(/^#/, "");
    if (/^game-[0-9]+$/.test(key)) open(key);
  }

  window.addEventListener("hashchange", route);
  route();
})();
