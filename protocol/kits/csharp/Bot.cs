// A starter bot for the arena, in C# with nothing but the base library (Mono or .NET).
//
// It speaks the protocol's JSON Lines encoding (docs/protocol.md): one JSON object per line
// on stdin and stdout. It asks for the legal actions in `ready`, so it plays every game
// without rules code of its own: put your strategy in Choose. It offers sessions, so a
// tournament with `reuse = true` keeps it running between games.

using System;
using System.Collections.Generic;
using System.IO;
using System.Linq;
using System.Text;

public static class Bot
{
    // UTF-8 without a byte order mark: a BOM before the first message is a protocol error
    static readonly TextWriter Out =
        new StreamWriter(Console.OpenStandardOutput(), new UTF8Encoding(false));
    static Random rng = new Random();

    // Your strategy: the actions to play now, at least one (the referee asks again while the
    // turn needs more). `turn` is the whole `turn` message: position, clocks, deadline...
    static List<string> Choose(Dictionary<string, object> turn, List<string> legal)
    {
        return new List<string> { legal[rng.Next(legal.Count)] };
    }

    static void Send(Dictionary<string, object> message)
    {
        Out.Write(Json.Write(message));
        Out.Write('\n');
        Out.Flush(); // every message, or it waits in the buffer while your clock runs
    }

    public static int Main()
    {
        var input = new StreamReader(Console.OpenStandardInput(), new UTF8Encoding(false));
        string line;
        while ((line = input.ReadLine()) != null)
        {
            if (line.Trim().Length == 0)
            {
                continue;
            }
            var msg = (Dictionary<string, object>)Json.Parse(line);
            switch (msg["type"] as string)
            {
                case "hello":
                    // a new game (in a session, after the previous one's `end`): start afresh
                    long seed = Convert.ToInt64(msg["seed"]);
                    long seat = Convert.ToInt64(msg["seat"]);
                    rng = new Random((int)((seed * 2 + seat) % int.MaxValue));
                    Send(new Dictionary<string, object> {
                        { "type", "log" },
                        { "message", "playing " + msg["game"] + " as " + msg["colour"] },
                    });
                    Send(new Dictionary<string, object> {
                        { "type", "ready" }, { "name", "csharp-kit" }, { "version", "1.0" },
                        { "legal", true }, { "sessions", true },
                    });
                    break;
                case "turn":
                    var legal = ((List<object>)msg["legal"]).Cast<string>().ToList();
                    Send(new Dictionary<string, object> {
                        { "type", "move" }, { "actions", Choose(msg, legal) },
                    });
                    break;
                default:
                    // `end` (the next game's `hello` or the end of stdin follows) and any type
                    // a later protocol adds: nothing to do
                    break;
            }
        }
        return 0;
    }
}
