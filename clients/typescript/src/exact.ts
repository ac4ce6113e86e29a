// Score fields' JSON numbers read as their own text: a double would round a 16-digit
// decimal, and `Number(x).toString()` does not give back what the board wrote.

const SCORE_NUMBERS = /("(?:score|previous_score|points_to_next|best|value)"\s*:\s*)(-?\d+(?:\.\d+)?(?:[eE][+-]?\d+)?)/g;

/** Parses a reply's JSON with every score field as the decimal string the server wrote. */
export function parseExact(text: string): unknown {
  return JSON.parse(text.replace(SCORE_NUMBERS, '$1"$2"'));
}
