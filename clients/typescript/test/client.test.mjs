// The TypeScript client against the local stack (LB_API, LB_EVENTS for players' tokens,
// LB_SOCIAL for friends, LB_REGION and the stack's local key pairs for SigV4;
// tests/e2e/clients.rs starts the stack and runs this), and its transport's rules over a
// fake fetch (retries, signatures).
import { test } from "node:test";
import assert from "node:assert/strict";
import { LeaderboardError, PlayerClient, parseExact } from "../dist/index.js";
import { ServerClient } from "../dist/server.js";

const env = process.env;
const live = env.LB_API ? test : test.skip;
const tag = `ts${process.pid}${Date.now() % 100000}`;

// The server calls are signed with SigV4 and checked by the local gateway as API
// Gateway checks them: the administrator's key (no policy limits it) unless a test names
// another (the game servers' key is held to GameServerPolicy).
const keyPair = (name) => {
  const [accessKeyId, secretAccessKey] = env[name].split(":");
  return async () => ({ accessKeyId, secretAccessKey });
};
const server = (key = "LB_ADMIN_KEY") =>
  new ServerClient({ baseUrl: env.LB_API, auth: { region: env.LB_REGION, credentials: keyPair(key) } });
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

live("a game server's signed calls pass on ids with colons, UTF-8 and queries, and only within its policy", async () => {
  const admin = server();
  const game = server("LB_GAME_SERVER_KEY");
  const lb = `${tag}:ranked`;
  await admin.createBoard({ leaderboard_id: lb, policy: "BEST" });
  const r = await game.submitScore(lb, "zoë-fan", { new_score: 12, match_id: "m:1" })
    .catch((e) => e);
  // An id outside the id pattern passes the signature and is refused by the service.
  assert.ok(r instanceof LeaderboardError && r.status === 400 && r.field === "p", String(r));
  assert.equal((await game.submitScore(lb, "p-1", { new_score: 12, match_id: "m:1" })).update_applied, true);
  await game.setProfile("p-1", { display_name: "Zoë «Ace» 東京" });
  const found = await admin.findPlayers("Zoë «A", { limit: 5 });
  assert.deepEqual(found.players.map((p) => p.player_id), ["p-1"]);
  // Outside the game servers' policy, and with a wrong secret: API Gateway's 403.
  await assert.rejects(game.createBoard({ leaderboard_id: `${tag}-no`, policy: "BEST" }),
    (e) => e instanceof LeaderboardError && e.status === 403 && e.code === "forbidden");
  const forged = new ServerClient({ baseUrl: env.LB_API, auth: { region: env.LB_REGION,
    credentials: async () => ({ accessKeyId: env.LB_GAME_SERVER_KEY.split(":")[0], secretAccessKey: "guess" }) } });
  await assert.rejects(forged.submitScore(lb, "p-1", { new_score: 99, match_id: "m:2" }),
    (e) => e instanceof LeaderboardError && e.status === 403 && e.code === "forbidden");
  const top = await player("p-1").top(lb);
  assert.deepEqual(top.entries.map((e) => [e.player_id, e.score]), [["p-1", "12"]]);
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

live("a player's own neighbourhood follows them, with the notice of who overtook them", async () => {
  const { default: WebSocket } = await import("ws");
  const srv = server();
  const lb = `${tag}-near`;
  await srv.createBoard({ leaderboard_id: lb, policy: "BEST" });
  await srv.submitScore(lb, "ann", { new_score: 50, match_id: "m" });
  await srv.submitScore(lb, "bob", { new_score: 40, match_id: "m" });
  const views = [];
  const watch = player("ann").watchMe(lb, "ann", 1, (v) => views.push(v),
    { realtimeUrl: env.LB_REALTIME, WebSocket, backoff: { baseMs: 50, maxMs: 500 } });
  try {
    const end = Date.now() + 5000;
    while (views.length === 0 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    assert.equal(views.at(-1).rank, 1);
    await new Promise((r) => setTimeout(r, 300)); // subscribed and read again
    await srv.submitScore(lb, "bob", { new_score: 60, match_id: "m2" });
    while (views.at(-1).rank !== 2 && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
    const now = views.at(-1);
    assert.equal(now.rank, 2);
    assert.equal(now.score, "50");
    assert.deepEqual(now.notices?.map((n) => [n.type, n.by]), [["overtaken", ["bob"]]]);
  } finally {
    watch.close();
  }
});

live("families and a match, tournaments, moderation, profiles and history: every other call", async () => {
  const srv = server();
  const ann = player("ann");
  const game = `g${tag}`.replace(/-/g, "_").slice(0, 30);
  await srv.createFamily({ game, mode: "m", policy: "BEST", regions: ["NA"], periods: ["ALL_TIME"] });
  const match = await srv.submitMatch({ game, mode: "m", region: "NA", player_id: "ann", match_id: "x1", score: 12 });
  assert.ok(match.results.length >= 2, "the global and the regional board");
  assert.ok(match.results.every((r) => r.score === "12"));
  const whole = await srv.submitWholeMatch({ game, mode: "m", region: "NA", match_id: "w1",
    players: [{ player_id: "ann", score: 20 }, { player_id: "dan", score: 7 }] });
  assert.deepEqual(whole.players.map((p) => [p.player_id, p.status]), [["ann", 200], ["dan", 200]]);
  assert.ok(whole.players[0].results.every((r) => r.score === "20" && r.rank === 1));
  await assert.rejects(srv.submitWholeMatch({ game, mode: "m", region: "NA", match_id: "w2",
    players: [{ player_id: "ann", score: 1 }, { player_id: "ann", score: 2 }] }),
  (e) => e instanceof LeaderboardError && e.status === 422 && e.code === "repeated");
  const history = await ann.history(game, "m", "ann");
  assert.ok(Array.isArray(history.items ?? history.entries ?? []));
  await assert.rejects(ann.results(`${game}:m:GLOBAL:ALL_TIME`), (e) => e instanceof LeaderboardError && e.status === 404);

  const t = `${tag}-cup`;
  const now = Date.now();
  await srv.createTournament({ tournament_id: t, game, mode: "race", title: "Cup",
    schedule: { start: now - 60_000, end: now + 3_600_000 }, cohort_size: 2, max_players: 10 });
  const cup = await ann.tournament(t);
  assert.equal(cup.tournament_id, t);
  await ann.join(t);
  await srv.joinPlayer(t, "bob");
  const scored = await srv.submitTournamentScore(t, "ann", { new_score: 5, match_id: "t1" });
  assert.equal(scored.score, "5");
  const cohort = await ann.cohort(t, "ann");
  assert.ok(JSON.stringify(cohort).includes('"ann"'));
  await assert.rejects(ann.league(t, "ann"), (e) => e instanceof LeaderboardError && e.code === "no_league");

  await assert.rejects(ann.setMyProfile({ display_name: "Me" }),
    (e) => e instanceof LeaderboardError && e.status === 403 && e.code === "profiles_server_only");
  const lb = `${game}:m:GLOBAL:ALL_TIME`;
  await srv.submitMatch({ game, mode: "m", region: "NA", player_id: "bob", match_id: "x1", score: 3 });
  await srv.removeEntry(lb, "bob", { reason: "wrong result" });
  assert.deepEqual((await ann.entries(lb, ["bob"])).entries, []);
  await srv.ban(game, "cheat", { reason: "aimbot" });
  await assert.rejects(srv.submitMatch({ game, mode: "m", region: "NA", player_id: "cheat", match_id: "x1", score: 9 }),
    (e) => e instanceof LeaderboardError && e.code === "player_banned");
  await srv.unban(game, "cheat", { reason: "appeal upheld" });
  await srv.submitMatch({ game, mode: "m", region: "NA", player_id: "cheat", match_id: "x2", score: 9 });
  const erased = await srv.erase("cheat", { reason: "GDPR request" });
  assert.ok(erased);
  assert.deepEqual((await ann.entries(lb, ["cheat"])).entries, []);
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

test("a claim is retried through a 503 (the first claim's event going out) and answers that claim", async () => {
  const busy = [503, { "retry-after": "0" }, JSON.stringify({ error: { code: "contention", message: "x" } })];
  const ok = [200, { "content-type": "application/json" }, '{"reward":{"reward_id":"g:m:GLOBAL:DAILY:2026-12-01","status":"CLAIMED"},"replayed":true}'];
  const { f, seen } = scripted([busy, ok]);
  const me = new PlayerClient({ baseUrl: "http://api.invalid", token: () => "t", fetch: f, retry: { baseMs: 1 } });
  const r = await me.claim("g:m:GLOBAL:DAILY:2026-12-01");
  assert.equal(r.replayed, true);
  assert.equal(seen.length, 2);
  assert.equal(seen[1].method, "POST");
});

live("rewards: a player's and a game server's reads and claims", async () => {
  const mine = await player(`${tag}-r`).rewards();
  assert.deepEqual([mine.player_id, mine.rewards, mine.claimed], [`${tag}-r`, [], []]);
  await assert.rejects(player(`${tag}-r`).claim("nope"),
    (e) => e instanceof LeaderboardError && e.status === 404 && e.code === "reward_not_found");
  const srv = server("LB_GAME_SERVER_KEY");
  assert.deepEqual((await srv.rewards(`${tag}-r`)).claimed, []);
  await assert.rejects(srv.claim(`${tag}-r`, "nope"), (e) => e.status === 404 && e.code === "reward_not_found");
});

test("API Gateway's own refusals come back as unauthorized and forbidden", async () => {
  for (const [status, body, code, message] of [
    [401, '{"message":"Unauthorized"}', "unauthorized", "Unauthorized"],
    [403, '{"message":"Forbidden"}', "forbidden", "Forbidden"],
    [502, "<html>bad gateway</html>", "http_error", "<html>bad gateway</html>"],
  ]) {
    const { f } = scripted([[status, {}, body]]);
    const reader = new PlayerClient({ baseUrl: "http://api.invalid", token: () => "t", fetch: f, retry: { attempts: 1 } });
    await assert.rejects(reader.top("b"),
      (e) => e instanceof LeaderboardError && e.status === status && e.code === code && e.message.endsWith(message));
  }
});

test("a network error is retried for a result, never for a POST without a match id", async () => {
  let calls = 0;
  const flaky = async (req) => {
    calls += 1;
    if (calls === 1) throw new TypeError("fetch failed");
    return new Response('{"score":7}', { status: 200 });
  };
  const srv = new ServerClient({ baseUrl: "http://api.invalid", auth: { apiKey: "k" }, fetch: flaky, retry: { baseMs: 1 } });
  assert.equal((await srv.submitScore("b", "p", { new_score: 7, match_id: "m" })).score, "7");
  assert.equal(calls, 2);

  calls = 0;
  await assert.rejects(srv.joinPlayer("t", "p"), (e) => e instanceof TypeError);
  assert.equal(calls, 1, "a join is sent once: the server may have seated the player");
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

test("a game's own data keeps its numbers, whatever its keys are called", () => {
  const text = JSON.stringify({
    entries: [{ score: 5, metadata: { best: 7, value: 1.5, nested: { score: 3, list: [{ points_to_next: 2 }] } } }],
    attributes: { score: 9, "a\"b": { value: 4 } },
    best: 11,
    note: 'a "score": 12 in a string',
  }).replace('"score":5', '"score":5.250');
  const v = parseExact(text);
  assert.deepEqual(v, {
    entries: [{ score: "5.250", metadata: { best: 7, value: 1.5, nested: { score: 3, list: [{ points_to_next: 2 }] } } }],
    attributes: { score: 9, "a\"b": { value: 4 } },
    best: "11",
    note: 'a "score": 12 in a string',
  });
  assert.throws(() => parseExact('{"score": 1,'), SyntaxError);
});

live("a live top view hears 10 of 10 changes in order across a forced reconnect", async () => {
  const { default: WebSocket } = await import("ws");
  const srv = server();
  const lb = `${tag}-live`;
  await srv.createBoard({ leaderboard_id: lb, policy: "BEST" });
  for (let i = 0; i < 5; i++) await srv.submitScore(lb, `seed${i}`, { new_score: 100 + i, match_id: "m" });

  const seen = [];
  const waiting = [];
  const onUpdate = (view) => {
    seen.push({ at: performance.now(), view });
    for (const w of waiting.splice(0)) w();
  };
  const watch = player("ann").watchTop(lb, 3, onUpdate,
    { realtimeUrl: env.LB_REALTIME, WebSocket, backoff: { baseMs: 50, maxMs: 500 },
      onError: (e) => console.log("live view:", e?.message ?? JSON.stringify(e)) });
  const until = async (ok, what) => {
    const end = performance.now() + 5000;
    while (!ok()) {
      if (performance.now() > end) throw new Error(`not within 5 s: ${what}`);
      await new Promise((r) => { waiting.push(r); setTimeout(r, 100); });
    }
  };
  const onTop = (p) => () => seen.length > 0 && seen.at(-1).view.entries[0]?.player_id === p;
  try {
    await until(() => seen.length > 0, "the first read");
    const took = [];
    for (let i = 1; i <= 10; i++) {
      if (i === 6) {
        // The events API drops every connection; the view reconnects and reads again.
        const res = await fetch(`${env.LB_EVENTS}/demo/drop`, { method: "POST" });
        assert.ok((await res.json()).dropped >= 1);
      }
      const sent = performance.now();
      await srv.submitScore(lb, `c${i}`, { new_score: 1000 + i, match_id: "m" });
      await until(onTop(`c${i}`), `c${i} on top`);
      took.push(Math.round(seen.at(-1).at - sent));
      await new Promise((r) => setTimeout(r, 550)); // past the view's 500 ms push gate
    }
    const versions = seen.map((s) => s.view.version);
    assert.deepEqual(versions, [...versions].sort((a, b) => a - b), "versions in order");
    assert.equal(new Set(versions).size, versions.length, "no version twice");
    // Each change seen, in order. A view may come twice with the same top at two versions
    // (a read after a gap gives the view as it is now, rows below the top changed too).
    const tops = seen.map((s) => s.view.entries[0].player_id).filter((p) => p.startsWith("c"))
      .filter((p, i, all) => p !== all[i - 1]);
    assert.deepEqual(tops, Array.from({ length: 10 }, (_, i) => `c${i + 1}`), "each change, in order");
    const sorted = [...took].sort((a, b) => a - b);
    console.log(`live top: write to update p50 ${sorted[4]} ms, max ${sorted[9]} ms (${took.join(", ")})`);
  } finally {
    watch.close();
  }
});
