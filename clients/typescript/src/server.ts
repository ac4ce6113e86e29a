// A game server's client (docs/clients.md): results, definitions, moderation, signed with
// SigV4 from the standard AWS credential chain, or the local stack's key. Its own entry
// (`leaderboard-client/server`), so a game's browser bundle never pulls in the AWS
// credential providers.

import { AS_TEXT, Api, type Authorize, type Body, type ClientOptions, type Reply, unwrap } from "./index.js";
import type { operations } from "./schema.js";
import type { AwsCredentialIdentityProvider } from "@smithy/types";

/** How a game server signs: SigV4 with credentials from the standard AWS chain (an IAM
 * role or user scoped to the server-only routes, docs/clients.md), or the local stack's
 * API key. */
export type ServerAuth =
  | { region: string; credentials?: AwsCredentialIdentityProvider }
  | { apiKey: string };

/** Signs `req` with SigV4 for API Gateway (`execute-api`), as the AWS SDK signs. */
async function sigv4(auth: { region: string; credentials?: AwsCredentialIdentityProvider }) {
  const [{ SignatureV4 }, { Sha256 }, { defaultProvider }] = await Promise.all([
    import("@smithy/signature-v4"),
    import("@aws-crypto/sha256-js"),
    import("@aws-sdk/credential-provider-node"),
  ]);
  const signer = new SignatureV4({
    service: "execute-api",
    region: auth.region,
    credentials: auth.credentials ?? defaultProvider(),
    sha256: Sha256,
  });
  return async (req: Request, body: string | undefined) => {
    const url = new URL(req.url);
    const signed = await signer.sign({
      method: req.method,
      protocol: url.protocol,
      hostname: url.hostname,
      port: url.port ? Number(url.port) : undefined,
      path: url.pathname,
      query: Object.fromEntries(url.searchParams),
      headers: { host: url.host, ...(body !== undefined ? { "content-type": "application/json" } : {}) },
      body,
    });
    return new Headers(signed.headers as Record<string, string>);
  };
}

/** A game server's client: results, board and tournament definitions, moderation. */
export class ServerClient {
  private readonly api: Api;

  constructor(options: ClientOptions & { auth: ServerAuth }) {
    const { auth } = options;
    let signer: Promise<Authorize> | undefined;
    this.api = new Api(options, async (req, body) => {
      if ("apiKey" in auth) return new Headers({ "x-api-key": auth.apiKey });
      signer ??= sigv4(auth);
      return (await signer)(req, body);
    });
  }

  /** Finds players by display-name prefix (an operator's read: support tools, moderation). */
  findPlayers(namePrefix: string, options: { limit?: number; cursor?: string } = {}) {
    return unwrap<Reply<operations["findPlayers"]>>(this.api.http.GET("/admin/players",
      { params: { query: { name_prefix: namePrefix, ...options } }, ...AS_TEXT }));
  }

  /** Posts one match result. `matchId` makes it exactly-once: a retry answers the first
   * outcome (`replayed: true`), so this client retries it on 429, 503 and network errors. */
  submitScore(board: string, player: string, result: Body<operations["submitScore"]>) {
    return unwrap<Reply<operations["submitScore"]>>(this.api.http.POST("/leaderboards/{lb}/players/{p}/score",
      { params: { path: { lb: board, p: player } }, body: result, ...AS_TEXT }));
  }

  /** Posts one match's results on a family's boards (`POST /scores`). */
  submitMatch(match: Body<operations["submitMatch"]>) {
    return unwrap<Reply<operations["submitMatch"]>>(this.api.http.POST("/scores", { body: match, ...AS_TEXT }));
  }

  /** Posts a whole match's results, up to 100 players, in one request (`POST /matches`):
   * each player recorded as `submitMatch` records one, one outcome per player with its own
   * `status` (a refused player does not refuse the others). Retried as a whole: each
   * player's first outcome is answered again. */
  submitWholeMatch(match: Body<operations["submitWholeMatch"]>) {
    return unwrap<Reply<operations["submitWholeMatch"]>>(this.api.http.POST("/matches", { body: match, ...AS_TEXT }));
  }

  /** Creates a standalone board. */
  createBoard(definition: Body<operations["createBoard"]>) {
    return unwrap<Reply<operations["createBoard"]>>(this.api.http.POST("/leaderboards", { body: definition, ...AS_TEXT }));
  }

  /** Creates a family (a game mode's boards per region and period). */
  createFamily(definition: Body<operations["createFamily"]>) {
    return unwrap<Reply<operations["createFamily"]>>(this.api.http.POST("/families", { body: definition, ...AS_TEXT }));
  }

  /** Creates a tournament. */
  createTournament(definition: Body<operations["createTournament"]>) {
    return unwrap<Reply<operations["createTournament"]>>(this.api.http.POST("/tournaments", { body: definition, ...AS_TEXT }));
  }

  /** Joins a player to a tournament's current occurrence. */
  joinPlayer(tournament: string, player: string) {
    return unwrap<Reply<operations["joinTournament"]>>(this.api.http.POST("/tournaments/{t}/players/{p}/join",
      { params: { path: { t: tournament, p: player } }, ...AS_TEXT }));
  }

  /** Posts a player's tournament result (an attempt). */
  submitTournamentScore(tournament: string, player: string, result: Body<operations["submitTournamentScore"]>) {
    return unwrap<Reply<operations["submitTournamentScore"]>>(this.api.http.POST("/tournaments/{t}/players/{p}/score",
      { params: { path: { t: tournament, p: player } }, body: result, ...AS_TEXT }));
  }

  /** Bans a player from a game's boards (their entries removed, audited). */
  ban(game: string, player: string, body: Body<operations["banPlayer"]>) {
    return unwrap<Reply<operations["banPlayer"]>>(this.api.http.PUT("/games/{game}/bans/{p}",
      { params: { path: { game, p: player } }, body, ...AS_TEXT }));
  }

  /** Lifts a ban. */
  unban(game: string, player: string, body: Body<operations["unbanPlayer"]>) {
    return unwrap<Reply<operations["unbanPlayer"]>>(this.api.http.DELETE("/games/{game}/bans/{p}",
      { params: { path: { game, p: player } }, body, ...AS_TEXT }));
  }

  /** Removes a player's entry from one board (audited). */
  removeEntry(board: string, player: string, body: Body<operations["removeEntry"]>) {
    return unwrap<Reply<operations["removeEntry"]>>(this.api.http.DELETE("/leaderboards/{lb}/players/{p}",
      { params: { path: { lb: board, p: player } }, body, ...AS_TEXT }));
  }

  /** Erases a player everywhere (GDPR); call again with the `cursor` of a 202. */
  erase(player: string, body: Body<operations["erasePlayer"]>) {
    return unwrap<Reply<operations["erasePlayer"]>>(this.api.http.DELETE("/players/{p}",
      { params: { path: { p: player } }, body, ...AS_TEXT }));
  }

  /** A player's rewards (docs/rewards.md), as the game server sees them. */
  rewards(player: string) {
    return unwrap<Reply<operations["getRewards"]>>(this.api.http.GET("/players/{p}/rewards",
      { params: { path: { p: player } }, ...AS_TEXT }));
  }

  /** Claims a player's reward for them, exactly once (a retry answers the first claim). */
  claim(player: string, rewardId: string) {
    return unwrap<Reply<operations["claimReward"]>>(this.api.http.POST("/players/{p}/rewards/{id}/claim",
      { params: { path: { p: player, id: rewardId } }, ...AS_TEXT }));
  }

  /** Sets a player's profile (display name, avatar, country). */
  setProfile(player: string, profile: Body<operations["putProfile"]>) {
    return unwrap<Reply<operations["putProfile"]>>(this.api.http.PUT("/players/{p}/profile",
      { params: { path: { p: player } }, body: profile, ...AS_TEXT }));
  }
}
