// Score fields' JSON numbers read as their own text: a double would round a 16-digit
// decimal, and `Number(x).toString()` does not give back what the board wrote.

/** The reply fields that hold scores: read as text here, typed as strings by `Exact`. */
export const SCORE_KEYS = ["score", "previous_score", "points_to_next", "best", "value"] as const;
export type ScoreKey = (typeof SCORE_KEYS)[number];

const SCORE_NUMBERS = new RegExp(`("(?:${SCORE_KEYS.join("|")})"\\s*:\\s*)(-?\\d+(?:\\.\\d+)?(?:[eE][+-]?\\d+)?)`, "g");

/** Parses a reply's JSON with every score field as the decimal string the server wrote. */
export function parseExact(text: string): unknown {
  return JSON.parse(text.replace(SCORE_NUMBERS, '$1"$2"'));
}
