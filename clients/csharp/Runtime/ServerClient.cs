// A game server's client (a Unity or .NET dedicated server: GameLift, Multiplay,
// Edgegap): results, a family's match, tournament joins and results, profiles and bans,
// each call signed with SigV4 (SigV4.cs) by credentials the server supplies.
// docs/clients.md has the walk-through.
using System;
using System.Net.Http;
using System.Text.RegularExpressions;
using System.Threading.Tasks;

namespace Leaderboard
{
    /// <summary>A game server's client: the server-only routes, signed with SigV4.</summary>
    public sealed class ServerClient
    {
        static readonly Regex Decimal = new Regex(@"^-?(0|[1-9][0-9]*)(\.[0-9]+)?$");
        readonly Transport transport;

        /// <param name="baseUrl">The API's URL (the stack's ApiUrl output).</param>
        /// <param name="region">The stack's region (signatures are scoped to it).</param>
        /// <param name="credentials">Gives the credentials to sign with, asked per request
        /// (e.g. a GameLift fleet role's, refreshed by the game); null reads the
        /// environment (AwsCredentials.FromEnvironment).</param>
        /// <param name="attempts">Tries in all for a 429, a 503 or a network error, on
        /// calls that are safe to repeat.</param>
        public ServerClient(string baseUrl, string region, Func<Task<AwsCredentials>> credentials = null, int attempts = 4,
            HttpClient http = null)
        {
            var source = credentials ?? AwsCredentials.FromEnvironment;
            transport = new Transport(baseUrl, attempts, http, async (req, body) =>
                SigV4.Sign(req, body, await source(), region, DateTime.UtcNow));
        }

        static string Esc(string s) { return Uri.EscapeDataString(s); }

        /// <summary>A score as a JSON number, exactly as written (decimal text, e.g.
        /// "83.417"); anything else is refused here rather than rounded.</summary>
        static string Number(string score)
        {
            if (score == null || !Decimal.IsMatch(score)) throw new ArgumentException("a score is decimal text, e.g. \"83.417\"", "score");
            return score;
        }

        /// <summary>Posts one match result on a board (`score` as decimal text). The match id
        /// makes it exactly-once, so it is retried: a retry answers the first outcome
        /// (`replayed`: true). `metadataJson` is the game's own object, or null.</summary>
        public async Task<Reply> SubmitScore(string board, string player, string score, string matchId, string metadataJson = null)
        {
            string body = "{\"new_score\":" + Number(score) + ",\"match_id\":" + Json.Quote(matchId)
                + (metadataJson != null ? ",\"metadata\":" + metadataJson : "") + "}";
            return new Reply(await transport.Call(HttpMethod.Post, "/leaderboards/" + Esc(board) + "/players/" + Esc(player) + "/score", body, true));
        }

        /// <summary>Posts one player's result of a match on a family's boards (`POST /scores`,
        /// every board of the game mode, region and period at once); `matchJson` is the
        /// body (game, mode, region, player_id, match_id, score, ...). Retried: exactly-once
        /// by its match id.</summary>
        public async Task<Reply> SubmitMatch(string matchJson)
        {
            return new Reply(await transport.Call(HttpMethod.Post, "/scores", matchJson, true));
        }

        /// <summary>Posts a whole match's results, up to 100 players, in one request
        /// (`POST /matches`): each player recorded as `SubmitMatch` records one, one outcome
        /// per player under `players` with its own `status` (a refused player does not refuse
        /// the others); `matchJson` is the body (game, mode, region, match_id, players).
        /// Retried: each player's first outcome is answered again.</summary>
        public async Task<Reply> SubmitWholeMatch(string matchJson)
        {
            return new Reply(await transport.Call(HttpMethod.Post, "/matches", matchJson, true));
        }

        /// <summary>Seats a player in a tournament's current occurrence. Sent once: the
        /// server may have seated the player before a failure.</summary>
        public async Task<Reply> JoinTournament(string tournament, string player)
        {
            return new Reply(await transport.Call(HttpMethod.Post, "/tournaments/" + Esc(tournament) + "/players/" + Esc(player) + "/join", null, false));
        }

        /// <summary>Posts a player's tournament result (an attempt); retried, exactly-once by
        /// its match id.</summary>
        public async Task<Reply> SubmitTournamentScore(string tournament, string player, string score, string matchId)
        {
            string body = "{\"new_score\":" + Number(score) + ",\"match_id\":" + Json.Quote(matchId) + "}";
            return new Reply(await transport.Call(HttpMethod.Post, "/tournaments/" + Esc(tournament) + "/players/" + Esc(player) + "/score", body, true));
        }

        /// <summary>A player's rewards (docs/rewards.md), as the game server sees them.</summary>
        public async Task<Reply> Rewards(string player)
        {
            return new Reply(await transport.Call(HttpMethod.Get, "/players/" + Esc(player) + "/rewards", null, true));
        }

        /// <summary>Claims a player's reward for them, exactly once; retried (a retry answers
        /// the first claim).</summary>
        public async Task<Reply> Claim(string player, string rewardId)
        {
            return new Reply(await transport.Call(HttpMethod.Post, "/players/" + Esc(player) + "/rewards/" + Esc(rewardId) + "/claim", null, true));
        }

        /// <summary>Sets a player's whole profile (`profileJson`, e.g.
        /// {"display_name":"Ann","country":"DE"}); retried (a PUT).</summary>
        public async Task<Reply> SetProfile(string player, string profileJson)
        {
            return new Reply(await transport.Call(HttpMethod.Put, "/players/" + Esc(player) + "/profile", profileJson, true));
        }

        /// <summary>Bans a player from a game's boards (audited with `reason`); retried (a
        /// PUT). An operator's route: the signer needs the operators' permissions.</summary>
        public async Task<Reply> Ban(string game, string player, string reason)
        {
            return new Reply(await transport.Call(HttpMethod.Put, "/games/" + Esc(game) + "/bans/" + Esc(player),
                "{\"reason\":" + Json.Quote(reason) + "}", true));
        }

        /// <summary>Lifts a ban (audited with `reason`); retried.</summary>
        public async Task<Reply> Unban(string game, string player, string reason)
        {
            return new Reply(await transport.Call(HttpMethod.Delete, "/games/" + Esc(game) + "/bans/" + Esc(player),
                "{\"reason\":" + Json.Quote(reason) + "}", true));
        }
    }
}
