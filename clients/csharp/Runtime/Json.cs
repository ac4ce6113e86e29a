// A small JSON reader for the client's replies: objects, arrays, strings, true/false/null,
// and numbers kept as the text the server wrote (a score is never read through a
// double). Unity has no general JSON reader without a package; this one is all the
// client needs.
using System;
using System.Collections.Generic;
using System.Globalization;
using System.Text;

namespace Leaderboard
{
    /// <summary>A JSON number, as its text.</summary>
    public sealed class JsonNumber
    {
        public readonly string Text;
        public JsonNumber(string text) { Text = text; }
        public long AsLong() { return long.Parse(Text, CultureInfo.InvariantCulture); }
        public override string ToString() { return Text; }
    }

    /// <summary>Reads JSON into Dictionary&lt;string, object&gt;, List&lt;object&gt;,
    /// string, JsonNumber, bool and null.</summary>
    public static class Json
    {
        public static object Parse(string text)
        {
            int i = 0;
            object value = Value(text, ref i);
            Space(text, ref i);
            if (i != text.Length) throw new FormatException("JSON: text after the value at " + i);
            return value;
        }

        static void Space(string s, ref int i)
        {
            while (i < s.Length && char.IsWhiteSpace(s[i])) i++;
        }

        static object Value(string s, ref int i)
        {
            Space(s, ref i);
            if (i >= s.Length) throw new FormatException("JSON: unexpected end");
            char c = s[i];
            if (c == '{') return Obj(s, ref i);
            if (c == '[') return Arr(s, ref i);
            if (c == '"') return Str(s, ref i);
            if (s.Length - i >= 4 && string.CompareOrdinal(s, i, "true", 0, 4) == 0) { i += 4; return true; }
            if (s.Length - i >= 5 && string.CompareOrdinal(s, i, "false", 0, 5) == 0) { i += 5; return false; }
            if (s.Length - i >= 4 && string.CompareOrdinal(s, i, "null", 0, 4) == 0) { i += 4; return null; }
            int start = i;
            while (i < s.Length && "+-0123456789.eE".IndexOf(s[i]) >= 0) i++;
            if (i == start) throw new FormatException("JSON: unexpected '" + c + "' at " + i);
            return new JsonNumber(s.Substring(start, i - start));
        }

        static Dictionary<string, object> Obj(string s, ref int i)
        {
            var o = new Dictionary<string, object>();
            i++;
            Space(s, ref i);
            if (s[i] == '}') { i++; return o; }
            while (true)
            {
                Space(s, ref i);
                string key = Str(s, ref i);
                Space(s, ref i);
                if (s[i++] != ':') throw new FormatException("JSON: ':' expected at " + (i - 1));
                o[key] = Value(s, ref i);
                Space(s, ref i);
                char c = s[i++];
                if (c == '}') return o;
                if (c != ',') throw new FormatException("JSON: ',' or '}' expected at " + (i - 1));
            }
        }

        static List<object> Arr(string s, ref int i)
        {
            var a = new List<object>();
            i++;
            Space(s, ref i);
            if (s[i] == ']') { i++; return a; }
            while (true)
            {
                a.Add(Value(s, ref i));
                Space(s, ref i);
                char c = s[i++];
                if (c == ']') return a;
                if (c != ',') throw new FormatException("JSON: ',' or ']' expected at " + (i - 1));
            }
        }

        static string Str(string s, ref int i)
        {
            if (s[i] != '"') throw new FormatException("JSON: string expected at " + i);
            i++;
            var b = new StringBuilder();
            while (s[i] != '"')
            {
                char c = s[i++];
                if (c != '\\') { b.Append(c); continue; }
                char e = s[i++];
                switch (e)
                {
                    case 'n': b.Append('\n'); break;
                    case 't': b.Append('\t'); break;
                    case 'r': b.Append('\r'); break;
                    case 'b': b.Append('\b'); break;
                    case 'f': b.Append('\f'); break;
                    case 'u': b.Append((char)int.Parse(s.Substring(i, 4), NumberStyles.HexNumber)); i += 4; break;
                    default: b.Append(e); break;
                }
            }
            i++;
            return b.ToString();
        }

        /// <summary>Writes a string as a JSON string.</summary>
        public static string Quote(string s)
        {
            var b = new StringBuilder("\"");
            foreach (char c in s)
            {
                if (c == '"' || c == '\\') b.Append('\\').Append(c);
                else if (c < ' ') b.Append("\\u").Append(((int)c).ToString("x4"));
                else b.Append(c);
            }
            return b.Append('"').ToString();
        }
    }
}
