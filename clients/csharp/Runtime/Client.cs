// The leaderboard service's client for Unity (C# 7.3, .NET Standard 2.0: HttpClient,
// ClientWebSocket; no package). A player's reads with the game's own sign-in, retries on
// 429 and 503 as the server asks, errors as LeaderboardException, and scores as the
// decimal text the board wrote. docs/clients.md has the walk-through.
using System;
using System.Collections.Generic;
using System.Linq;
using System.Net.Http;
using System.Threading;
using System.Threading.Tasks;

namespace Leaderboard
{
    /// <summary>An error reply of the API: its status, stable code, message and field.</summary>
    public sealed class LeaderboardException : Exception
    {
        public readonly int Status;
        public readonly string Code;
        public readonly string Field;
        public readonly string RequestId;

        public LeaderboardException(int status, string code, string message, string field, string requestId)
            : base(status + " " + code + ": " + message)
        {
            Status = status; Code = code; Field = field; RequestId = requestId;
        }
    }

    /// <summary>One row of a board: its place, player, score (decimal text) and name.</summary>
    public sealed class Entry
    {
        public long Rank;
        public string PlayerId;
        public string Score;
        public string DisplayName;
        public bool Self;

        internal static Entry Of(object row)
        {
            var o = (Dictionary<string, object>)row;
            return new Entry
            {
                Rank = Reply.Long(o, "rank"),
                PlayerId = Reply.Text(o, "player_id"),
                Score = Reply.Text(o, "score"),
                DisplayName = Reply.Text(o, "display_name"),
                Self = o.ContainsKey("self") && o["self"] is bool && (bool)o["self"],
            };
        }
    }

    /// <summary>A reply: its fields as read (numbers as their text), with typed getters.</summary>
    public class Reply
    {
        public readonly Dictionary<string, object> Fields;
        internal Reply(Dictionary<string, object> fields) { Fields = fields; }

        internal static string Text(Dictionary<string, object> o, string key)
        {
            object v;
            return o.TryGetValue(key, out v) && v != null ? v.ToString() : null;
        }

        internal static long Long(Dictionary<string, object> o, string key)
        {
            object v;
            return o.TryGetValue(key, out v) && v is JsonNumber ? ((JsonNumber)v).AsLong() : 0;
        }

        internal static long? NullableLong(Dictionary<string, object> o, string key)
        {
            object v;
            return o.TryGetValue(key, out v) && v is JsonNumber ? ((JsonNumber)v).AsLong() : (long?)null;
        }

        internal static List<Entry> Rows(Dictionary<string, object> o, string key)
        {
            object v;
            return o.TryGetValue(key, out v) && v is List<object>
                ? ((List<object>)v).Select(Entry.Of).ToList() : new List<Entry>();
        }

        public string this[string key] { get { return Text(Fields, key); } }
    }

    /// <summary>A player's rank, score and neighbours.</summary>
    public sealed class RankView : Reply
    {
        public long Rank { get { return Long(Fields, "global_rank"); } }
        public string Score { get { return Text(Fields, "score"); } }
        public long Total { get { return Long(Fields, "total"); } }
        public List<Entry> Neighbors { get { return Rows(Fields, "neighbors"); } }
        internal RankView(Dictionary<string, object> f) : base(f) { }
    }

    /// <summary>Where a player stands among their friends.</summary>
    public sealed class FriendsView : Reply
    {
        /// <summary>The player's place among their friends; null when they have no
        /// standing on the board.</summary>
        public long? Rank { get { return NullableLong(Fields, "friends_rank"); } }
        public long Total { get { return Long(Fields, "friends_total"); } }
        public List<Entry> Neighbors { get { return Rows(Fields, "neighbors"); } }
        internal FriendsView(Dictionary<string, object> f) : base(f) { }
    }

    /// <summary>Rows of a board: its top, a list of players.</summary>
    public sealed class RowsView : Reply
    {
        public List<Entry> Entries { get { return Rows(Fields, "entries"); } }
        /// <summary>Where a walk goes on (null on its last page).</summary>
        public string NextCursor { get { return Text(Fields, "next_cursor"); } }
        internal RowsView(Dictionary<string, object> f) : base(f) { }
    }

    /// <summary>A live view: its channel, version and rows.</summary>
    public sealed class LiveView : Reply
    {
        public string Channel { get { return Text(Fields, "channel"); } }
        public long Version { get { return Long(Fields, "version"); } }
        public long Previous { get { return Long(Fields, "previous"); } }
        public long Rank { get { return Long(Fields, "rank"); } }
        public List<Entry> Entries { get { return Rows(Fields, "entries"); } }
        internal LiveView(Dictionary<string, object> f) : base(f) { }
    }

    /// <summary>How equal scores share places (the reads' `rank_mode`): Unique 1, 2, 3, 4
    /// (the default); Competition 1, 2, 2, 4; Dense 1, 2, 2, 3 (on a board that keeps dense
    /// ranks).</summary>
    public enum RankMode { Unique, Competition, Dense }

    /// <summary>A player's client: the player routes, with the game's own sign-in.</summary>
    public sealed class PlayerClient
    {
        readonly Transport transport;
        internal readonly Func<Task<string>> Token;

        /// <param name="baseUrl">The API's URL (the stack's ApiUrl output).</param>
        /// <param name="token">Gives the player's current token (a JWT), asked per request.</param>
        /// <param name="attempts">Tries in all for a 429, a 503 or a network error.</param>
        public PlayerClient(string baseUrl, Func<Task<string>> token, int attempts = 4, HttpClient http = null)
        {
            Token = token;
            transport = new Transport(baseUrl, attempts, http, async (req, body) =>
                req.Headers.TryAddWithoutValidation("Authorization", "Bearer " + await token()));
        }

        static string Esc(string s) { return Uri.EscapeDataString(s); }

        static string Mode(RankMode mode)
        {
            return mode == RankMode.Unique ? "" : "&rank_mode=" + mode.ToString().ToLowerInvariant();
        }

        public async Task<RankView> Rank(string board, string player, int k = 0, RankMode mode = RankMode.Unique)
        {
            return new RankView(await Get("/leaderboards/" + Esc(board) + "/players/" + Esc(player) + "/rank?k=" + k + Mode(mode)));
        }

        public async Task<FriendsView> Friends(string board, string player, int k = 0, RankMode mode = RankMode.Unique)
        {
            return new FriendsView(await Get("/leaderboards/" + Esc(board) + "/players/" + Esc(player) + "/friends-rank?k=" + k + Mode(mode)));
        }

        public async Task<RowsView> Top(string board, int n = 10, RankMode mode = RankMode.Unique)
        {
            return new RowsView(await Get("/leaderboards/" + Esc(board) + "/top?n=" + n + Mode(mode)));
        }

        public async Task<RowsView> Entries(string board, IEnumerable<string> players, RankMode mode = RankMode.Unique)
        {
            return new RowsView(await Get("/leaderboards/" + Esc(board) + "/entries?players=" + Esc(string.Join(",", players)) + Mode(mode)));
        }

        public async Task<Reply> Profile(string player)
        {
            return new Reply(await Get("/players/" + Esc(player) + "/profile"));
        }

        /// <summary>One page of a walk through a board (docs/walks.md): pass the page's
        /// NextCursor to the next call; null when the walk is done.</summary>
        public async Task<RowsView> Ranks(string board, int limit = 100, string cursor = null, RankMode mode = RankMode.Unique)
        {
            string q = "?limit=" + limit + (cursor != null ? "&cursor=" + Esc(cursor) : "") + Mode(mode);
            return new RowsView(await Get("/leaderboards/" + Esc(board) + "/ranks" + q));
        }

        /// <summary>Walks a whole board in order, a page of `limit` rows at a time, calling
        /// `each` for every row; `each` returns false to stop early. Every page is read
        /// with the previous page's cursor, so the walk sees each player once even while
        /// results arrive (docs/walks.md).</summary>
        public async Task Walk(string board, Func<Entry, bool> each, int limit = 100, RankMode mode = RankMode.Unique,
            CancellationToken cancel = default(CancellationToken))
        {
            string cursor = null;
            do
            {
                cancel.ThrowIfCancellationRequested();
                var page = await Ranks(board, limit, cursor, mode);
                foreach (var entry in page.Entries)
                    if (!each(entry)) return;
                cursor = page.NextCursor;
            } while (cursor != null);
        }

        /// <summary>A board's definition and state.</summary>
        public async Task<Reply> Board(string board)
        {
            return new Reply(await Get("/leaderboards/" + Esc(board)));
        }

        /// <summary>A sealed window's results.</summary>
        public async Task<RowsView> Results(string board)
        {
            return new RowsView(await Get("/leaderboards/" + Esc(board) + "/results"));
        }

        /// <summary>A player's sealed periods in a game mode.</summary>
        public async Task<Reply> History(string game, string mode, string player)
        {
            return new Reply(await Get("/games/" + Esc(game) + "/modes/" + Esc(mode) + "/players/" + Esc(player) + "/history"));
        }

        /// <summary>Sets the calling player's own profile, when the stack lets players
        /// (PlayersSetProfiles); `profileJson` is the body, e.g. {"display_name":"Ann"}.</summary>
        public async Task<Reply> SetMyProfile(string profileJson)
        {
            return new Reply(await Call(HttpMethod.Put, "/me/profile", profileJson));
        }

        /// <summary>The calling player's rewards (docs/rewards.md): `rewards` to claim, and
        /// `claimed`.</summary>
        public async Task<Reply> Rewards()
        {
            return new Reply(await Get("/me/rewards"));
        }

        /// <summary>Claims one of the calling player's rewards, exactly once; retried, as a
        /// retry (or a claim at the same time) answers the first claim (`replayed` true).
        /// The game grants from the claim's event.</summary>
        public async Task<Reply> Claim(string rewardId)
        {
            return new Reply(await transport.Call(HttpMethod.Post, "/me/rewards/" + Esc(rewardId) + "/claim", null, true));
        }

        /// <summary>A tournament and its occurrences.</summary>
        public async Task<Reply> Tournament(string tournament)
        {
            return new Reply(await Get("/tournaments/" + Esc(tournament)));
        }

        /// <summary>Joins the calling player to a tournament's current occurrence (sent
        /// once: a join is not retried).</summary>
        public async Task<Reply> Join(string tournament)
        {
            return new Reply(await Call(HttpMethod.Post, "/tournaments/" + Esc(tournament) + "/join", null));
        }

        /// <summary>A player's cohort in a tournament's occurrence, with its standings.</summary>
        public async Task<Reply> Cohort(string tournament, string player)
        {
            return new Reply(await Get("/tournaments/" + Esc(tournament) + "/players/" + Esc(player) + "/cohort"));
        }

        /// <summary>A player's league tier and standing.</summary>
        public async Task<Reply> League(string tournament, string player)
        {
            return new Reply(await Get("/tournaments/" + Esc(tournament) + "/players/" + Esc(player) + "/league"));
        }

        public async Task<LiveView> LiveTop(string board, int n)
        {
            return new LiveView(await Get("/leaderboards/" + Esc(board) + "/live/top?n=" + n));
        }

        public async Task<LiveView> LiveMe(string board, string player, int k)
        {
            return new LiveView(await Get("/leaderboards/" + Esc(board) + "/players/" + Esc(player) + "/live?k=" + k));
        }

        /// <summary>Keeps a board's top n current over the events API (see LiveWatch).</summary>
        public LiveWatch WatchTop(string board, int n, Action<LiveView> onUpdate, string realtimeUrl, string host = null)
        {
            return new LiveWatch(() => LiveTop(board, n), Token, onUpdate, realtimeUrl, host);
        }

        /// <summary>Keeps the player's own neighbourhood (rank +- k) current.</summary>
        public LiveWatch WatchMe(string board, string player, int k, Action<LiveView> onUpdate, string realtimeUrl, string host = null)
        {
            return new LiveWatch(() => LiveMe(board, player, k), Token, onUpdate, realtimeUrl, host);
        }

        Task<Dictionary<string, object>> Get(string path) { return transport.Call(HttpMethod.Get, path, null, true); }

        /// <summary>GET and PUT are retried (Transport); a POST (a join) is sent once.</summary>
        Task<Dictionary<string, object>> Call(HttpMethod method, string path, string body)
        {
            return transport.Call(method, path, body, method != HttpMethod.Post);
        }
    }

    /// <summary>The HTTP side both clients share: a call with its authorization added,
    /// retried on 429, 503 and network errors when the caller says it is safe to, after what
    /// Retry-After asks (or a jittered backoff), at most `attempts` tries; an error reply
    /// thrown as LeaderboardException.</summary>
    internal sealed class Transport
    {
        readonly HttpClient http;
        readonly string baseUrl;
        readonly int attempts;
        readonly Func<HttpRequestMessage, string, Task> authorize;
        readonly Random jitter = new Random();

        internal Transport(string baseUrl, int attempts, HttpClient http, Func<HttpRequestMessage, string, Task> authorize)
        {
            this.baseUrl = baseUrl.TrimEnd('/');
            this.attempts = attempts;
            this.http = http ?? new HttpClient();
            this.authorize = authorize;
        }

        internal async Task<Dictionary<string, object>> Call(HttpMethod method, string path, string body, bool retry)
        {
            int tries = retry ? attempts : 1;
            for (int attempt = 1; ; attempt++)
            {
                var req = new HttpRequestMessage(method, baseUrl + path);
                if (body != null) req.Content = new StringContent(body, System.Text.Encoding.UTF8, "application/json");
                await authorize(req, body);
                HttpResponseMessage res;
                try
                {
                    res = await http.SendAsync(req);
                }
                catch (HttpRequestException) when (attempt < tries)
                {
                    await Task.Delay(Backoff(attempt, null));
                    continue;
                }
                int status = (int)res.StatusCode;
                string text = await res.Content.ReadAsStringAsync();
                if ((status == 429 || status == 503) && attempt < tries)
                {
                    await Task.Delay(Backoff(attempt, res.Headers.RetryAfter != null ? res.Headers.RetryAfter.Delta : null));
                    continue;
                }
                if (status >= 400) throw Error(status, text);
                return (Dictionary<string, object>)Json.Parse(text);
            }
        }
        TimeSpan Backoff(int attempt, TimeSpan? asked)
        {
            double bound = Math.Min(5000, 100 * Math.Pow(2, attempt));
            double ms;
            lock (jitter) ms = jitter.NextDouble() * bound;
            var wait = TimeSpan.FromMilliseconds(ms);
            return asked.HasValue && asked.Value > wait ? asked.Value : wait;
        }

        static LeaderboardException Error(int status, string text)
        {
            try
            {
                var error = (Dictionary<string, object>)((Dictionary<string, object>)Json.Parse(text))["error"];
                return new LeaderboardException(status, Reply.Text(error, "code"), Reply.Text(error, "message"),
                    Reply.Text(error, "field"), Reply.Text(error, "request_id"));
            }
            catch (Exception)
            {
                // Not the API's error body: API Gateway's own refusal of a token or a
                // signature (`{"message": "Unauthorized"}`) keeps its status as a code a
                // game can act on; anything else (a proxy's page) is the status alone.
                var code = status == 401 ? "unauthorized" : status == 403 ? "forbidden" : "http_error";
                return new LeaderboardException(status, code, GatewayMessage(text), null, null);
            }
        }

        static string GatewayMessage(string text)
        {
            try
            {
                return Reply.Text((Dictionary<string, object>)Json.Parse(text), "message") ?? text;
            }
            catch (Exception)
            {
                return text;
            }
        }
    }
}
