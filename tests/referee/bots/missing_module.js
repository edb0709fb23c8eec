// A JavaScript bot whose dependency is not installed: Node prints the error ("Cannot find
// module") above a long stack and a version line, so a tail of its stderr misses the point.
const msgpack = require("msgpack-lite");

process.stdin.on("data", () => {
  process.stdout.write(msgpack.encode({ type: "ready", name: "missing-module" }));
});
