// A starter bot for the arena, in C++17 with nlohmann/json (a header: Debian's
// nlohmann-json3-dev, or https://github.com/nlohmann/json).
//
// It speaks the protocol's default encoding, msgpack (docs/protocol.md): messages are msgpack
// maps back to back on stdin and stdout, which nlohmann/json reads and writes. It asks for
// the legal actions in `ready`, so it plays every game without rules code of its own: put
// your strategy in `choose`. It offers sessions, so a tournament with `reuse = true` keeps it
// running between games.

#include <cstdint>
#include <iostream>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

using json = nlohmann::json;

namespace {

std::mt19937_64 rng;

// Your strategy: the actions to play now, at least one (the referee asks again while the turn
// needs more). `turn` is the whole `turn` message: position, clocks, deadline...
std::vector<std::string> choose(const json& turn, const std::vector<std::string>& legal) {
    (void)turn;
    std::uniform_int_distribution<std::size_t> pick(0, legal.size() - 1);
    return {legal[pick(rng)]};
}

void send(const json& message) {
    std::vector<std::uint8_t> bytes = json::to_msgpack(message);
    std::cout.write(reinterpret_cast<const char*>(bytes.data()),
                    static_cast<std::streamsize>(bytes.size()));
    std::cout << std::flush;  // every message, or it waits in the buffer while your clock runs
}

// The next message, or a null json at the end of stdin. strict = false: read one msgpack
// value and leave the rest of the stream for the next call.
json receive() {
    if (std::cin.peek() == std::char_traits<char>::eof()) {
        return nullptr;
    }
    return json::from_msgpack(std::cin, false);
}

}  // namespace

int main() {
    std::ios::sync_with_stdio(false);  // cin reads what has arrived, not a full buffer
    for (json msg = receive(); !msg.is_null(); msg = receive()) {
        const std::string type = msg.value("type", "");
        if (type == "hello") {
            // a new game (in a session, after the previous one's `end`): start afresh
            rng.seed(msg["seed"].get<std::uint64_t>() * 2 + msg["seat"].get<std::uint64_t>());
            send({{"type", "log"},
                  {"message", "playing " + msg.value("game", "") + " as " +
                                  msg.value("colour", "")}});
            send({{"type", "ready"},
                  {"name", "cpp-kit"},
                  {"version", "1.0"},
                  {"legal", true},
                  {"sessions", true}});
        } else if (type == "turn") {
            auto legal = msg["legal"].get<std::vector<std::string>>();
            send({{"type", "move"}, {"actions", choose(msg, legal)}});
        }
        // `end` (the next game's `hello` or the end of stdin follows) and any type a later
        // protocol adds: nothing to do
    }
    return 0;
}
