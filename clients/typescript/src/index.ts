// The leaderboard service's TypeScript client (docs/clients.md). The request and reply
// types are generated from openapi.yaml (`npm run generate`, src/schema.d.ts); this file
// is the layer a game developer reads: who is calling (a player's token, or a game
// server's signature), retries that the server makes safe, errors as values, and scores
// exactly as the board writes them.

import createClient from "openapi-fetch";
import { parseExact, type ScoreKey } from "./exact.js";
import { follow, type LiveOptions, type LiveView, type Watch } from "./live.js";
import type { components, operations, paths } from "./schema.js";

export type { components, operations, paths };
export type { LiveOptions, LiveView, Watch };
export { parseExact };

/** A score as the board writes it: a decimal string, never a double (83.417 stays "83.417"). */
export type Score = string;

/** `T` with every score field a decimal string, as this client returns replies. */
export type Exact<T> = T extends (infer U)[]
  ? Exact<U>[]
  : T extends object
    ? { [K in keyof T]: K extends ScoreKey ? Exclude<T[K], number> | Extract<T[K], null> | Score : Exact<T[K]> }
    : T;

export type Body<Op> = Op extends { requestBody?: { content: { "application/json": infer B } } } ? B : never;

export type Reply<Op> = Op extends { responses: infer R }
  ? 200 extends keyof R
    ? R[200] extends { content: { "application/json": infer B } } ? Exact<B> : never
    : 201 extends keyof R
      ? R[201] extends { content: { "application/json": infer B } } ? Exact<B> : never
      : never
  : never;

/** An error reply of the API, as a value: its status, stable `code`, message and field. */
export class LeaderboardError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly field?: string,
    readonly requestId?: string,
  ) {
    super(`${status} ${code}: ${message}`);
    this.name = "LeaderboardError";
  }
}

/** How requests are retried: on 429 and 503 (waiting what `Retry-After` asks) and on
 * network errors, with jitter, at most `attempts` tries in all. */
export interface RetryPolicy {
  attempts: number;
  baseMs: number;
  maxMs: number;
}

const RETRY: RetryPolicy = { attempts: 4, baseMs: 100, maxMs: 5_000 };

/** How a request is authorized: returns the headers to add (a player's token, a
 * signature, the local stack's key). */
export type Authorize = (req: Request, body: string | undefined) => Promise<Headers> | Headers;

export interface ClientOptions {
  /** The API's URL: the stack's `ApiUrl` output, or http://127.0.0.1:3000 locally. */
  baseUrl: string;
  retry?: Partial<RetryPolicy>;
  /** Another fetch (tests, a game engine's own). */
  fetch?: typeof fetch;
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/** Whether a request may be sent again: reads and idempotent writes, a result, which
 * carries its match id (the server answers a retried match with its first outcome), and a
 * reward's claim (answered with the first claim). Any other POST is never retried: the
 * client must not make a retry unsafe. */
function retryable(method: string, url: string, body: string | undefined): boolean {
  if (method === "GET" || method === "PUT" || method === "DELETE") return true;
  if (method === "POST" && /\/rewards\/[^/]+\/claim$/.test(new URL(url).pathname)) return true;
  return method === "POST" && body !== undefined && /"match_id"\s*:/.test(body);
}

/** The fetch every call goes through: authorized, retried as [`RetryPolicy`] says. */
function transport(authorize: Authorize, policy: RetryPolicy, base: typeof fetch): typeof fetch {
  return async (input: RequestInfo | URL, init?: RequestInit) => {
    const first = new Request(input, init);
    const body = first.body ? await first.clone().text() : undefined;
    const again = retryable(first.method, first.url, body);
    for (let attempt = 1; ; attempt++) {
      const req = new Request(first.url, { method: first.method, headers: first.headers, body });
      for (const [k, v] of await authorize(req, body)) req.headers.set(k, v);
      let res: Response | undefined;
      try {
        res = await base(req);
      } catch (error) {
        if (!again || attempt >= policy.attempts) throw error;
      }
      if (res && !(again && (res.status === 429 || res.status === 503) && attempt < policy.attempts)) {
        return res;
      }
      // Full jitter below the exponential bound; at least what Retry-After asks.
      const asked = Number(res?.headers.get("retry-after") ?? "0") * 1000;
      const bound = Math.min(policy.maxMs, policy.baseMs * 2 ** attempt);
      await sleep(Math.max(asked, Math.random() * bound));
    }
  };
}

/** The API's calls, typed from openapi.yaml, through one authorized transport. */
export class Api {
  readonly http: ReturnType<typeof createClient<paths>>;

  constructor(options: ClientOptions, authorize: Authorize) {
    const policy = { ...RETRY, ...options.retry };
    this.http = createClient<paths>({
      baseUrl: options.baseUrl.replace(/\/$/, ""),
      fetch: transport(authorize, policy, options.fetch ?? globalThis.fetch),
    });
  }
}

/** The codes of API Gateway's own refusals, which carry none: a token the JWT
 * authorizer refused, a signature or a policy IAM refused. */
const GATEWAY_CODES: Record<number, string> = { 401: "unauthorized", 403: "forbidden" };

/** A reply's body, or its error as a [`LeaderboardError`]. */
export async function unwrap<T>(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) {
    const text = typeof error === "string" ? error : JSON.stringify(error ?? {});
    let detail: { code?: string; message?: string; field?: string; request_id?: string } = {};
    try {
      const body = JSON.parse(text) as { error?: typeof detail; message?: string };
      // API Gateway's own refusal of a token or a signature is `{"message": ...}`.
      detail = body.error ?? { message: body.message };
    } catch {
      // Not the API's error body (a proxy's page): the status alone.
    }
    throw new LeaderboardError(response.status, detail.code ?? GATEWAY_CODES[response.status] ?? "http_error",
      detail.message ?? text, detail.field, detail.request_id);
  }
  return parseExact(data as string) as T;
}

export const AS_TEXT = { parseAs: "text" } as const;

export type RankMode = "unique" | "competition" | "dense";

/** A player's client: the player routes, with whatever sign-in the game has. */
export class PlayerClient {
  private readonly api: Api;
  private readonly token: () => string | Promise<string>;

  /** `token` gives the player's current token (a JWT from the game's sign-in); it is
   * asked for on every request, so a refresh is the game's business. */
  constructor(options: ClientOptions & { token: () => string | Promise<string> }) {
    this.token = options.token;
    this.api = new Api(options, async () => new Headers({ authorization: `Bearer ${await options.token()}` }));
  }

  /** A board's top `n` as a live view (its channel and version); marks it watched. */
  liveTop(board: string, n?: number) {
    return unwrap<LiveView>(this.api.http.GET("/leaderboards/{lb}/live/top",
      { params: { path: { lb: board }, query: n === undefined ? {} : { n } }, ...AS_TEXT }));
  }

  /** The calling player's neighbourhood (rank +- `k`) as a live view. */
  liveMe(board: string, player: string, k?: number) {
    return unwrap<LiveView>(this.api.http.GET("/leaderboards/{lb}/players/{p}/live",
      { params: { path: { lb: board, p: player }, query: k === undefined ? {} : { k } }, ...AS_TEXT }));
  }

  /** Keeps a board's top `n` current: `onUpdate` hears each version once, in order,
   * across reconnects (docs/clients.md, "Live views"). */
  watchTop(board: string, n: number, onUpdate: (view: LiveView) => void, live: LiveOptions): Watch {
    return follow(() => this.liveTop(board, n), this.token, onUpdate, live);
  }

  /** Keeps the calling player's neighbourhood current, notices included. */
  watchMe(board: string, player: string, k: number, onUpdate: (view: LiveView) => void, live: LiveOptions): Watch {
    return follow(() => this.liveMe(board, player, k), this.token, onUpdate, live);
  }

  /** A player's rank, score and `k` neighbours on each side. */
  rank(board: string, player: string, q: { k?: number; rank_mode?: RankMode } = {}) {
    return unwrap<Reply<operations["getRank"]>>(this.api.http.GET("/leaderboards/{lb}/players/{p}/rank",
      { params: { path: { lb: board, p: player }, query: q }, ...AS_TEXT }));
  }

  /** Where a player stands among their friends. */
  friends(board: string, player: string, q: { k?: number; rank_mode?: RankMode } = {}) {
    return unwrap<Reply<operations["getFriendsRank"]>>(this.api.http.GET("/leaderboards/{lb}/players/{p}/friends-rank",
      { params: { path: { lb: board, p: player }, query: q }, ...AS_TEXT }));
  }

  /** The top `n` of a board. */
  top(board: string, q: { n?: number; rank_mode?: RankMode } = {}) {
    return unwrap<Reply<operations["getTop"]>>(this.api.http.GET("/leaderboards/{lb}/top",
      { params: { path: { lb: board }, query: q }, ...AS_TEXT }));
  }

  /** One page of a walk through a board (docs/walks.md): from a rank, or after a cursor. */
  ranks(board: string, q: operations["getRanks"]["parameters"]["query"] = {}) {
    return unwrap<Reply<operations["getRanks"]>>(this.api.http.GET("/leaderboards/{lb}/ranks",
      { params: { path: { lb: board }, query: q }, ...AS_TEXT }));
  }

  /** Walks a whole board, page by page, each player once. */
  async *walk(board: string, q: { limit?: number; rank_mode?: RankMode } = {}) {
    let cursor: string | undefined;
    do {
      const page = await this.ranks(board, { ...q, ...(cursor ? { cursor } : {}) });
      yield* page.entries;
      cursor = page.next_cursor ?? undefined;
    } while (cursor);
  }

  /** The rows of a list of players (absent players are left out). */
  entries(board: string, players: string[]) {
    return unwrap<Reply<operations["getEntries"]>>(this.api.http.GET("/leaderboards/{lb}/entries",
      { params: { path: { lb: board }, query: { players: players.join(",") } }, ...AS_TEXT }));
  }

  /** A board's definition and state. */
  board(board: string) {
    return unwrap<Reply<operations["getBoard"]>>(this.api.http.GET("/leaderboards/{lb}",
      { params: { path: { lb: board } }, ...AS_TEXT }));
  }

  /** A sealed window's results. */
  results(board: string) {
    return unwrap<Reply<operations["getResults"]>>(this.api.http.GET("/leaderboards/{lb}/results",
      { params: { path: { lb: board } }, ...AS_TEXT }));
  }

  /** A player's sealed periods in a game mode. */
  history(game: string, mode: string, player: string, q: operations["getHistory"]["parameters"]["query"] = {}) {
    return unwrap<Reply<operations["getHistory"]>>(this.api.http.GET("/games/{game}/modes/{mode}/players/{p}/history",
      { params: { path: { game, mode, p: player }, query: q }, ...AS_TEXT }));
  }

  /** A player's public profile. */
  profile(player: string) {
    return unwrap<Reply<operations["getProfile"]>>(this.api.http.GET("/players/{p}/profile",
      { params: { path: { p: player } }, ...AS_TEXT }));
  }

  /** Sets the caller's own profile (when the stack lets players: `PlayersSetProfiles`). */
  setMyProfile(profile: Body<operations["putOwnProfile"]>) {
    return unwrap<Reply<operations["putOwnProfile"]>>(this.api.http.PUT("/me/profile",
      { body: profile, ...AS_TEXT }));
  }

  /** The signed-in player's rewards (docs/rewards.md): `rewards` to claim, and `claimed`. */
  rewards() {
    return unwrap<Reply<operations["getOwnRewards"]>>(this.api.http.GET("/me/rewards", { ...AS_TEXT }));
  }

  /** Claims one of the player's rewards, exactly once: a retry (or a claim at the same time)
   * answers the first claim with `replayed: true`; the game grants from the claim's event. */
  claim(rewardId: string) {
    return unwrap<Reply<operations["claimOwnReward"]>>(this.api.http.POST("/me/rewards/{id}/claim",
      { params: { path: { id: rewardId } }, ...AS_TEXT }));
  }

  /** A tournament and its occurrences. */
  tournament(tournament: string) {
    return unwrap<Reply<operations["getTournament"]>>(this.api.http.GET("/tournaments/{t}",
      { params: { path: { t: tournament } }, ...AS_TEXT }));
  }

  /** Joins the calling player to the tournament's current occurrence. */
  join(tournament: string) {
    return unwrap<Reply<operations["joinTournamentAsPlayer"]>>(this.api.http.POST("/tournaments/{t}/join",
      { params: { path: { t: tournament } }, ...AS_TEXT }));
  }

  /** A player's cohort in a tournament's occurrence, with its standings. */
  cohort(tournament: string, player: string) {
    return unwrap<Reply<operations["getCohort"]>>(this.api.http.GET("/tournaments/{t}/players/{p}/cohort",
      { params: { path: { t: tournament, p: player } }, ...AS_TEXT }));
  }

  /** A player's league tier and standing. */
  league(tournament: string, player: string) {
    return unwrap<Reply<operations["getLeagueStanding"]>>(this.api.http.GET("/tournaments/{t}/players/{p}/league",
      { params: { path: { t: tournament, p: player } }, ...AS_TEXT }));
  }
}
