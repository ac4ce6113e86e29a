// Score fields' JSON numbers read as their own text: a double would round a 16-digit
// decimal, and `Number(x).toString()` does not give back what the board wrote.

/** The reply fields that hold scores: read as text here, typed as strings by `Exact`. */
export const SCORE_KEYS = ["score", "previous_score", "points_to_next", "best", "value"] as const;
export type ScoreKey = (typeof SCORE_KEYS)[number];

/** The fields that hold the game's own data (a result's `metadata`, a profile's
 * `attributes`): read as the game wrote them, whatever their keys are called. */
const GAME_DATA = new Set(["metadata", "attributes"]);
const SCORES = new Set<string>(SCORE_KEYS);
const NUMBER = /-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?/y;
const STRING = /"(?:[^"\\]|\\.)*"/y;

/** Parses a reply's JSON with every score field as the decimal string the server wrote;
 * numbers anywhere else, and everything inside the game's own data, as JSON reads them. */
export function parseExact(text: string): unknown {
  let out = "";
  let at = 0;
  // Per open container: whether it is an object, the key being read, and whether it is
  // inside the game's own data.
  const open: { object: boolean; key: string | null; game: boolean }[] = [];
  let expectKey = false;
  while (at < text.length) {
    const c = text[at];
    const here = open[open.length - 1];
    if (c === '"') {
      STRING.lastIndex = at;
      const m = STRING.exec(text);
      if (!m) break; // not JSON: JSON.parse below says why
      if (here?.object && expectKey) here.key = JSON.parse(m[0]) as string;
      out += m[0];
      at += m[0].length;
      continue;
    }
    if (c === "-" || (c >= "0" && c <= "9")) {
      NUMBER.lastIndex = at;
      const m = NUMBER.exec(text);
      if (!m) break;
      const score = here?.object && !here.game && here.key !== null && SCORES.has(here.key);
      out += score ? `"${m[0]}"` : m[0];
      at += m[0].length;
      continue;
    }
    if (c === "{" || c === "[") {
      const game = (here?.game ?? false) || (here?.object === true && GAME_DATA.has(here.key ?? ""));
      open.push({ object: c === "{", key: null, game });
      expectKey = c === "{";
    } else if (c === "}" || c === "]") {
      open.pop();
      expectKey = false;
    } else if (c === ",") {
      expectKey = here?.object ?? false;
    } else if (c === ":") {
      expectKey = false;
    }
    out += c;
    at += 1;
  }
  return JSON.parse(at < text.length ? text : out);
}
