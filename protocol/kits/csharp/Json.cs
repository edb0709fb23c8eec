// Just enough JSON for the protocol, without a package: Parse gives Dictionary<string,
// object>, List<object>, string, long, double, bool or null; Write serialises dictionaries,
// lists (any IEnumerable), strings, numbers and booleans on one line.

using System;
using System.Collections;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

public sealed class Json
{
    readonly string s;
    int i;

    Json(string text)
    {
        s = text;
    }

    public static object Parse(string text)
    {
        var p = new Json(text);
        object value = p.Value();
        p.Space();
        if (p.i != p.s.Length)
        {
            throw p.Error("trailing characters");
        }
        return value;
    }

    public static string Write(object value)
    {
        var b = new StringBuilder();
        Write(b, value);
        return b.ToString();
    }

    static void Write(StringBuilder b, object v)
    {
        if (v == null)
        {
            b.Append("null");
        }
        else if (v is string)
        {
            b.Append('"');
            foreach (char c in (string)v)
            {
                switch (c)
                {
                    case '"': b.Append("\\\""); break;
                    case '\\': b.Append("\\\\"); break;
                    case '\n': b.Append("\\n"); break;
                    case '\r': b.Append("\\r"); break;
                    case '\t': b.Append("\\t"); break;
                    default:
                        if (c < 0x20)
                        {
                            b.AppendFormat("\\u{0:x4}", (int)c);
                        }
                        else
                        {
                            b.Append(c);
                        }
                        break;
                }
            }
            b.Append('"');
        }
        else if (v is bool)
        {
            b.Append((bool)v ? "true" : "false");
        }
        else if (v is IDictionary)
        {
            b.Append('{');
            string sep = "";
            foreach (DictionaryEntry e in (IDictionary)v)
            {
                b.Append(sep);
                Write(b, e.Key.ToString());
                b.Append(':');
                Write(b, e.Value);
                sep = ",";
            }
            b.Append('}');
        }
        else if (v is IEnumerable)
        {
            b.Append('[');
            string sep = "";
            foreach (object o in (IEnumerable)v)
            {
                b.Append(sep);
                Write(b, o);
                sep = ",";
            }
            b.Append(']');
        }
        else
        {
            b.Append(Convert.ToString(v, CultureInfo.InvariantCulture)); // numbers
        }
    }

    object Value()
    {
        Space();
        switch (Peek())
        {
            case '{': return Object();
            case '[': return Array();
            case '"': return String();
            case 't': return Literal("true", true);
            case 'f': return Literal("false", false);
            case 'n': return Literal("null", null);
            default: return Number();
        }
    }

    Dictionary<string, object> Object()
    {
        var map = new Dictionary<string, object>();
        i++;
        Space();
        if (Peek() == '}')
        {
            i++;
            return map;
        }
        while (true)
        {
            Space();
            string key = String();
            Space();
            Expect(':');
            map[key] = Value();
            Space();
            if (Peek() == ',')
            {
                i++;
            }
            else
            {
                Expect('}');
                return map;
            }
        }
    }

    List<object> Array()
    {
        var list = new List<object>();
        i++;
        Space();
        if (Peek() == ']')
        {
            i++;
            return list;
        }
        while (true)
        {
            list.Add(Value());
            Space();
            if (Peek() == ',')
            {
                i++;
            }
            else
            {
                Expect(']');
                return list;
            }
        }
    }

    string String()
    {
        Expect('"');
        var b = new StringBuilder();
        while (true)
        {
            if (i >= s.Length)
            {
                throw Error("unterminated string");
            }
            char c = s[i++];
            if (c == '"')
            {
                return b.ToString();
            }
            if (c != '\\')
            {
                b.Append(c);
                continue;
            }
            char e = s[i++];
            switch (e)
            {
                case 'b': b.Append('\b'); break;
                case 'f': b.Append('\f'); break;
                case 'n': b.Append('\n'); break;
                case 'r': b.Append('\r'); break;
                case 't': b.Append('\t'); break;
                case 'u':
                    b.Append((char)int.Parse(s.Substring(i, 4), NumberStyles.HexNumber));
                    i += 4;
                    break;
                default: b.Append(e); break; // \" \\ \/
            }
        }
    }

    object Number()
    {
        int start = i;
        while (i < s.Length && "+-0123456789.eE".IndexOf(s[i]) >= 0)
        {
            i++;
        }
        string t = s.Substring(start, i - start);
        if (t.Length == 0)
        {
            throw Error("unexpected character");
        }
        if (t.IndexOfAny(new[] { '.', 'e', 'E' }) >= 0)
        {
            return double.Parse(t, CultureInfo.InvariantCulture);
        }
        return long.Parse(t, CultureInfo.InvariantCulture);
    }

    object Literal(string word, object value)
    {
        if (string.CompareOrdinal(s, i, word, 0, word.Length) != 0)
        {
            throw Error("bad literal");
        }
        i += word.Length;
        return value;
    }

    void Space()
    {
        while (i < s.Length && char.IsWhiteSpace(s[i]))
        {
            i++;
        }
    }

    char Peek()
    {
        return i < s.Length ? s[i] : '\0';
    }

    void Expect(char c)
    {
        if (Peek() != c)
        {
            throw Error("expected '" + c + "'");
        }
        i++;
    }

    FormatException Error(string what)
    {
        return new FormatException("JSON: " + what + " at " + i);
    }
}
