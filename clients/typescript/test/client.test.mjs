// The TypeScript client against the local stack (LB_API, LB_EVENTS for players' tokens,
// LB_SOCIAL for friends, LB_API_KEY; tests/e2e/clients.rs starts the stack and runs
// this), and its transport's rules over a fake fetch (retries, signatures).
import { test } from "node:test";
import assert from "node:assert/strict";
import { LeaderboardError, PlayerClient, ServerClient, parseExact } from "../dist/index.js";

const env = process.env;
const live = env.LB_API ? test : test.skip;
const tag = `ts${process.pid}${Date.now() % 100000}`;

const server = () => new ServerClient({ baseUrl: env.LB_API, auth: { apiKey: env.LB_API_KEY } });
const tokens = new Map();
async function token(player) {
  if (!tokens.has(player)) {
    const res = await fetch(`${env.LB_EVENTS}/demo/token?player=${player}&format=jwt`);
    tokens.set(player, (await res.text()).trim());
  }
  return tokens.get(player);
}
const player = (p) => new PlayerClient({ baseUrl: env.LB_API, token: () => token(p) });

live("results, replays and every player read of a board", async () => {
  const srv = server();
  const lb = `${tag}-best`;
  await srv.createBoard({ leaderboard_id: lb, policy: "BEST" });
  const scores = { ann: 40, bob: 70, cid: 55, dee: 10 };
  for (const [p, s] of Object.entries(scores)) {
    const r = await srv.submitScore(lb, p, { new_score: s, match_id: "m-1" });
    assert.equal(r.replayed, false);
  }
  // A retried match answers its first outcome.
  const again = await srv.submitScore(lb, "ann", { new_score: 40, match_id: "m-1" });
  assert.equal(again.replayed, true);
  assert.equal(again.score, "40");

  const ann = player("ann");
  const rank = await ann.rank(lb, "ann", { k: 1 });
  assert.equal(rank.global_rank, 3);
  assert.equal(rank.score, "40");
  assert.deepEqual(rank.neighbors.map((n) => n.player_id), ["cid", "ann", "dee"]);
  const top = await ann.top(lb, { n: 2 });
  assert.deepEqual(top.entries.map((e) => [e.player_id, e.score]), [["bob", "70"], ["cid", "55"]]);
  const entries = await ann.entries(lb, ["dee", "bob", "nobody"]);
  assert.deepEqual(entries.entries.map((e) => e.player_id).sort(), ["bob", "dee"]);
  const walked = [];
  for await (const e of ann.walk(lb, { limit: 2 })) walked.push(e.player_id);
  assert.deepEqual(walked, ["bob", "cid", "ann", "dee"]);
  const board = await ann.board(lb);
  assert.equal(board.leaderboard_id, lb);

  await fetch(`${env.LB_SOCIAL}/players/ann/friends`, { method: "PUT", body: JSON.stringify(["bob", "zed"]) });
  const friends = await ann.friends(lb, "ann", { k: 1 });
  assert.equal(friends.friends_rank, 2);
  assert.equal(friends.friends_total, 2);
});

live("scores come back exactly as the board writes them, past a double's digits", async () => {
  const srv = server();
  const lb = `${tag}-laps`;
  await srv.createBoard({ leaderboard_id: lb, policy: "MIN", decimals: 3 });
  const r = await srv.submitScore(lb, "ann", { new_score: "9007199254740.991", match_id: "l-1" });
  // JSON.parse would give 9007199254740.99 (a double); the client keeps the text.
  assert.equal(r.score, "9007199254740.991");
  const top = await player("ann").top(lb);
  assert.equal(top.entries[0].score, "9007199254740.991");
});

live("profiles, and errors as values with the API's code, field and request id", async () => {
  const srv = server();
  await srv.setProfile(`${tag}-p`, { display_name: "Ann the Great", country: "FR" });
  const profile = await player("ann").profile(`${tag}-p`);
  assert.equal(profile.display_name, "Ann the Great");

  await assert.rejects(player("ann").top(`${tag}-missing`), (e) => {
    assert.ok(e instanceof LeaderboardError);
    assert.equal(e.status, 404);
    assert.equal(e.code, "board_not_found");
    assert.ok(e.requestId, "the request id a support ticket quotes");
    return true;
  });
  await assert.rejects(srv.submitScore(`${tag}-missing`, "ann", { new_score: 1, match_id: "x" }),
    (e) => e instanceof LeaderboardError && e.code === "board_not_found");
  await assert.rejects(player("ann").rank(`${tag}-best`, "ann", { k: 999 }),
    (e) => e instanceof LeaderboardError && e.status === 400 && e.field === "k");
});

/** A fetch that answers `replies` in turn, recording each request. */
function scripted(replies) {
  const seen = [];
  const f = async (req) => {
    seen.push({ method: req.method, headers: Object.fromEntries(req.headers), body: await req.text() });
    const [status, headers, body] = replies[Math.min(seen.length - 1, replies.length - 1)];
    return new Response(body ?? "{}", { status, headers });
  };
  return { f, seen };
}

test("a 503 or 429 is retried after its Retry-After; a result is, a POST without a match id is not", async () => {
  const busy = [503, { "retry-after": "0" }, JSON.stringify({ error: { code: "store_unavailable", message: "x" } })];
  const ok = [200, { "content-type": "application/json" }, '{"score":5,"replayed":false}'];
  const { f, seen } = scripted([busy, busy, ok]);
  const srv = new ServerClient({ baseUrl: "http://api.invalid", auth: { apiKey: "k" }, fetch: f, retry: { baseMs: 1 } });
  const r = await srv.submitScore("b", "p", { new_score: 5, match_id: "m" });
  assert.equal(r.score, "5");
  assert.equal(seen.length, 3);
  assert.equal(seen[2].headers["x-api-key"], "k");

  const once = scripted([busy]);
  const srv2 = new ServerClient({ baseUrl: "http://api.invalid", auth: { apiKey: "k" }, fetch: once.f, retry: { baseMs: 1 } });
  await assert.rejects(srv2.createBoard({ leaderboard_id: "b", policy: "BEST" }),
    (e) => e instanceof LeaderboardError && e.status === 503 && e.code === "store_unavailable");
  assert.equal(once.seen.length, 1, "a POST without a match id is sent once");

  const bounded = scripted([[429, { "retry-after": "0" }, "{}"]]);
  const reader = new PlayerClient({ baseUrl: "http://api.invalid", token: () => "t", fetch: bounded.f, retry: { attempts: 3, baseMs: 1 } });
  await assert.rejects(reader.top("b"), (e) => e.status === 429);
  assert.equal(bounded.seen.length, 3, "at most `attempts` tries");
  assert.equal(bounded.seen[0].headers.authorization, "Bearer t");
});

test("a game server's call is signed with SigV4 by the AWS SDK's signer", async () => {
  const ok = [200, {}, '{"score":1}'];
  const { f, seen } = scripted([ok]);
  const credentials = async () => ({ accessKeyId: "AKIDEXAMPLE", secretAccessKey: "secret" });
  const srv = new ServerClient({ baseUrl: "https://abc.execute-api.eu-west-1.amazonaws.com", fetch: f,
    auth: { region: "eu-west-1", credentials } });
  await srv.submitScore("b", "p", { new_score: 1, match_id: "m" });
  const auth = seen[0].headers.authorization;
  assert.match(auth, /^AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE\/\d{8}\/eu-west-1\/execute-api\/aws4_request, SignedHeaders=[^,]*host[^,]*, Signature=[0-9a-f]{64}$/);
  assert.ok(seen[0].headers["x-amz-date"]);
});

test("score fields parse as their own text, other numbers as numbers", () => {
  const v = parseExact('{"score":12345678901234.567,"rank":3,"entries":[{"score":-1.5e3,"subscores":[1,2]}],"previous_score":null}');
  assert.deepEqual(v, { score: "12345678901234.567", rank: 3, entries: [{ score: "-1.5e3", subscores: [1, 2] }], previous_score: null });
});
