// The C# client's tests against a local stack (tests/e2e/clients.rs builds them with mcs,
// runs them with mono and passes LB_API, LB_EVENTS, LB_REALTIME, LB_SOCIAL, LB_API_KEY,
// LB_REGION and the stack's local SigV4 key pairs as ID:SECRET in LB_ADMIN_KEY,
// LB_GAME_SERVER_KEY). Boards are set up over plain HTTP with the local key; the player's
// client under test reads, and the server's client signs its calls. Prints one line per test ("ok" / "not ok") and exits 1 if any failed.
using System;
using System.Collections.Generic;
using System.Diagnostics;
using System.Linq;
using System.Net.Http;
using System.Text;
using System.Threading;
using System.Threading.Tasks;
using Leaderboard;

static class ClientTests
{
    static readonly string Api = Environment.GetEnvironmentVariable("LB_API");
    static readonly string Events = Environment.GetEnvironmentVariable("LB_EVENTS");
    static readonly string Realtime = Environment.GetEnvironmentVariable("LB_REALTIME");
    static readonly string Social = Environment.GetEnvironmentVariable("LB_SOCIAL");
    static readonly string Key = Environment.GetEnvironmentVariable("LB_API_KEY");
    static readonly HttpClient Http = new HttpClient();
    static readonly string Tag = "cs" + Process.GetCurrentProcess().Id + DateTime.UtcNow.Ticks % 100000;
    static readonly Dictionary<string, string> Tokens = new Dictionary<string, string>();

    static async Task<string> Send(HttpMethod method, string url, string body, bool key = true)
    {
        var req = new HttpRequestMessage(method, url);
        if (key) req.Headers.Add("x-api-key", Key);
        if (body != null) req.Content = new StringContent(body, Encoding.UTF8, "application/json");
        var res = await Http.SendAsync(req);
        string text = await res.Content.ReadAsStringAsync();
        if (!res.IsSuccessStatusCode) throw new Exception(method + " " + url + ": " + (int)res.StatusCode + " " + text);
        return text;
    }

    static Task Score(string lb, string p, string m, string score)
    {
        return Send(HttpMethod.Post, Api + "/leaderboards/" + lb + "/players/" + p + "/score",
            "{\"new_score\":" + score + ",\"match_id\":\"" + m + "\"}");
    }

    static async Task<string> Token(string player)
    {
        string t;
        lock (Tokens) if (Tokens.TryGetValue(player, out t)) return t;
        t = (await Send(HttpMethod.Get, Events + "/demo/token?player=" + player + "&format=jwt", null, false)).Trim();
        lock (Tokens) Tokens[player] = t;
        return t;
    }

    static PlayerClient As(string player) { return new PlayerClient(Api, () => Token(player)); }

    /// <summary>A game server's client signing with one of the stack's key pairs (the
    /// environment variable `name` holds ID:SECRET), or with `secret` in its place.</summary>
    static ServerClient Server(string name, string secret = null)
    {
        var pair = Environment.GetEnvironmentVariable(name).Split(':');
        var credentials = new AwsCredentials(pair[0], secret ?? pair[1]);
        return new ServerClient(Api, Environment.GetEnvironmentVariable("LB_REGION"), () => Task.FromResult(credentials));
    }

    static async Task Refused(Func<Task> call, int status, string code, string what)
    {
        try { await call(); }
        catch (LeaderboardException e)
        {
            Equal(status, e.Status, what + ": status");
            Equal(code, e.Code, what + ": code");
            return;
        }
        throw new Exception(what + ": no error");
    }

    static void Equal<T>(T want, T got, string what)
    {
        if (!EqualityComparer<T>.Default.Equals(want, got)) throw new Exception(what + ": want " + want + ", got " + got);
    }

    static async Task Reads()
    {
        string lb = Tag + "-best";
        await Send(HttpMethod.Post, Api + "/leaderboards", "{\"leaderboard_id\":\"" + lb + "\",\"policy\":\"BEST\"}");
        var scores = new Dictionary<string, string> { { "ann", "40" }, { "bob", "70" }, { "cid", "55" }, { "dee", "10" } };
        foreach (var s in scores) await Score(lb, s.Key, "m", s.Value);
        var ann = As("ann");
        var rank = await ann.Rank(lb, "ann", 1);
        Equal(3L, rank.Rank, "rank");
        Equal("40", rank.Score, "score");
        Equal("cid,ann,dee", string.Join(",", rank.Neighbors.Select(e => e.PlayerId)), "neighbours");
        Equal(true, rank.Neighbors[1].Self, "self");
        var top = await ann.Top(lb, 2);
        Equal("bob 70,cid 55", string.Join(",", top.Entries.Select(e => e.PlayerId + " " + e.Score)), "top");
        var rows = await ann.Entries(lb, new[] { "dee", "bob", "nobody" });
        Equal("bob,dee", string.Join(",", rows.Entries.Select(e => e.PlayerId).OrderBy(p => p)), "entries");
        await Send(HttpMethod.Put, Social + "/players/ann/friends", "[\"bob\",\"zed\"]", false);
        var friends = await ann.Friends(lb, "ann", 1);
        Equal((long?)2, friends.Rank, "friends rank");
        // A player with no standing has no place among their friends: null, not 0.
        await Send(HttpMethod.Put, Social + "/players/newbie/friends", "[\"bob\"]", false);
        Equal(null, (await As("newbie").Friends(lb, "newbie", 1)).Rank, "a friends rank without a standing");
        await Send(HttpMethod.Put, Api + "/players/" + Tag + "-p/profile", "{\"display_name\":\"Ann the Great\"}");
        Equal("Ann the Great", (await ann.Profile(Tag + "-p"))["display_name"], "profile");
    }

    static async Task ExactScores()
    {
        string lb = Tag + "-laps";
        await Send(HttpMethod.Post, Api + "/leaderboards", "{\"leaderboard_id\":\"" + lb + "\",\"policy\":\"MIN\",\"decimals\":3}");
        await Score(lb, "ann", "l", "\"9007199254740.991\"");
        Equal("9007199254740.991", (await As("ann").Top(lb)).Entries[0].Score, "a 16-digit decimal");
    }

    static async Task Errors()
    {
        try
        {
            await As("ann").Top(Tag + "-missing");
            throw new Exception("no error");
        }
        catch (LeaderboardException e)
        {
            Equal(404, e.Status, "status");
            Equal("board_not_found", e.Code, "code");
            if (string.IsNullOrEmpty(e.RequestId)) throw new Exception("no request id");
        }
        try
        {
            await As("ann").Rank(Tag + "-best", "ann", 999);
            throw new Exception("no error");
        }
        catch (LeaderboardException e)
        {
            Equal(400, e.Status, "status");
            Equal("k", e.Field, "field");
        }
    }

    static async Task EveryOtherRead()
    {
        var ann = As("ann");
        string lb = Tag + "-best";
        var walked = new List<string>();
        await ann.Walk(lb, e => { walked.Add(e.PlayerId); return true; }, 2);
        Equal("bob,cid,ann,dee", string.Join(",", walked), "a walk");
        var firstThree = new List<string>();
        await ann.Walk(lb, e => { firstThree.Add(e.PlayerId); return firstThree.Count < 3; }, 2);
        Equal("bob,cid,ann", string.Join(",", firstThree), "a walk stopped early");
        Equal(lb, (await ann.Board(lb))["leaderboard_id"], "the board");
        try { await ann.Results(lb); throw new Exception("no error"); }
        catch (LeaderboardException e) { Equal(404, e.Status, "an open board's results"); }
        string game = ("g" + Tag).Replace("-", "_");
        await Send(HttpMethod.Post, Api + "/families", "{\"game\":\"" + game + "\",\"mode\":\"m\",\"policy\":\"BEST\",\"regions\":[\"NA\"],\"periods\":[\"ALL_TIME\"]}");
        var history = await ann.History(game, "m", "ann");
        if (history.Fields == null) throw new Exception("no history reply");
        var rewards = await ann.Rewards();
        Equal("ann", rewards["player_id"], "a player's rewards");
        try { await ann.Claim("nope"); throw new Exception("no error"); }
        catch (LeaderboardException e) { Equal("reward_not_found", e.Code, "an unknown reward's claim"); }
        try { await Server("LB_GAME_SERVER_KEY").Claim("ann", "nope"); throw new Exception("no error"); }
        catch (LeaderboardException e) { Equal(404, e.Status, "a game server's claim of an unknown reward"); }
        try { await ann.SetMyProfile("{\"display_name\":\"Me\"}"); throw new Exception("no error"); }
        catch (LeaderboardException e) { Equal("profiles_server_only", e.Code, "players may not set profiles here"); }
        string t = Tag + "-cup";
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        await Send(HttpMethod.Post, Api + "/tournaments", "{\"tournament_id\":\"" + t + "\",\"game\":\"" + game +
            "\",\"mode\":\"race\",\"title\":\"Cup\",\"schedule\":{\"start\":" + (now - 60000) + ",\"end\":" + (now + 3600000) +
            "},\"cohort_size\":2,\"max_players\":10}");
        Equal(t, (await ann.Tournament(t))["tournament_id"], "the tournament");
        await ann.Join(t);
        var cohort = await ann.Cohort(t, "ann");
        Equal(t, cohort["tournament_id"], "the cohort's tournament");
        Equal(true, cohort.Fields.ContainsKey("waiting"), "the cohort's seats");
        try { await ann.League(t, "ann"); throw new Exception("no error"); }
        catch (LeaderboardException e) { Equal("no_league", e.Code, "a tournament without a league"); }
    }

    static async Task RankModes()
    {
        string lb = Tag + "-ties";
        await Send(HttpMethod.Post, Api + "/leaderboards", "{\"leaderboard_id\":\"" + lb + "\",\"policy\":\"BEST\",\"dense_ranks\":true}");
        foreach (var s in new[] { "a:30", "b:20", "c:20", "d:10" }) await Score(lb, s.Split(':')[0], "m", s.Split(':')[1]);
        var ann = As("ann");
        Func<RowsView, string> ranks = v => string.Join(",", v.Entries.Select(e => e.Rank));
        Equal("1,2,3,4", ranks(await ann.Top(lb, 4)), "unique");
        Equal("1,2,2,4", ranks(await ann.Top(lb, 4, RankMode.Competition)), "competition");
        Equal("1,2,2,3", ranks(await ann.Top(lb, 4, RankMode.Dense)), "dense");
        Equal(3L, (await ann.Rank(lb, "d", 0, RankMode.Dense)).Rank, "a dense rank");
        var dense = new List<long>();
        await ann.Walk(lb, e => { dense.Add(e.Rank); return true; }, 3, RankMode.Dense);
        Equal("1,2,2,3", string.Join(",", dense), "a dense walk");
    }

    static async Task ServerCalls()
    {
        var admin = Server("LB_ADMIN_KEY");
        var game = Server("LB_GAME_SERVER_KEY");
        string lb = Tag + ":ranked";
        await Send(HttpMethod.Post, Api + "/leaderboards", "{\"leaderboard_id\":\"" + lb + "\",\"policy\":\"BEST\",\"decimals\":3}");
        // A result on a board id with a colon, exact to the last digit, and its retry.
        var first = await game.SubmitScore(lb, "p1", "9007199254740.991", "m:1", "{\"kills\":7}");
        Equal("True", first["update_applied"], "applied");
        Equal("True", (await game.SubmitScore(lb, "p1", "9007199254740.991", "m:1", "{\"kills\":7}"))["replayed"], "a retry answers the first outcome");
        Equal("9007199254740.991", (await As("p1").Top(lb, 1)).Entries[0].Score, "the exact score");
        // Profiles with UTF-8, read back by a player.
        await game.SetProfile("p1", "{\"display_name\":\"Zo\u00eb \u6771\u4eac\"}");
        Equal("Zo\u00eb \u6771\u4eac", (await As("p1").Profile("p1"))["display_name"], "a UTF-8 name");
        // A family's match, and a tournament's join and result.
        string g = ("s" + Tag).Replace("-", "_");
        await Send(HttpMethod.Post, Api + "/families", "{\"game\":\"" + g + "\",\"mode\":\"m\",\"regions\":[\"EU\"],\"periods\":[\"ALL_TIME\",\"DAILY\"]}");
        var match = await game.SubmitMatch("{\"game\":\"" + g + "\",\"mode\":\"m\",\"region\":\"EU\",\"player_id\":\"p1\",\"match_id\":\"x1\",\"score\":5}");
        Equal(true, ((List<object>)match.Fields["results"]).Count >= 2, "a match reaches the family's boards");
        var whole = await game.SubmitWholeMatch("{\"game\":\"" + g + "\",\"mode\":\"m\",\"region\":\"EU\",\"match_id\":\"w1\"," +
            "\"players\":[{\"player_id\":\"p1\",\"score\":9},{\"player_id\":\"p2\",\"score\":\"9007199254740993\"}]}");
        var outcomes = ((List<object>)whole.Fields["players"]).Cast<Dictionary<string, object>>().ToList();
        Equal("p1:200 p2:200", string.Join(" ", outcomes.Select(o => o["player_id"] + ":" + o["status"])),
            "one outcome per player");
        var p2Boards = ((List<object>)outcomes[1]["results"]).Cast<Dictionary<string, object>>();
        Equal(true, p2Boards.All(r => r.ContainsKey("refused")), "a score past the range refused on that player's boards alone");
        string t = Tag + "-srv";
        long now = DateTimeOffset.UtcNow.ToUnixTimeMilliseconds();
        await Send(HttpMethod.Post, Api + "/tournaments", "{\"tournament_id\":\"" + t + "\",\"game\":\"" + g +
            "\",\"mode\":\"race\",\"title\":\"Cup\",\"schedule\":{\"start\":" + (now - 60000) + ",\"end\":" + (now + 3600000) +
            "},\"cohort_size\":5,\"max_players\":10}");
        await game.JoinTournament(t, "p1");
        var attempt = await game.SubmitTournamentScore(t, "p1", "42", "r1");
        Equal("42", attempt["score"], "a tournament result");
        // Bans are the operators': an administrator's key may, the game server's may not.
        await admin.Ban(g, "cheater", "aimbot");
        await admin.Unban(g, "cheater", "appeal upheld");
        await Refused(() => game.Ban(g, "cheater", "aimbot"), 403, "forbidden", "a game server banning");
        // A wrong secret, and an id the service refuses after the signature passed.
        await Refused(() => Server("LB_GAME_SERVER_KEY", "guessed").SubmitScore(lb, "p2", "1", "m"), 403, "forbidden", "a wrong secret");
        await Refused(() => game.SubmitScore(lb, "\u00e9l\u00e8ve", "1", "m"), 400, "invalid_request", "a UTF-8 id");
        Equal(1L, (await As("p1").Top(lb, 5)).Entries.Count, "nothing refused reached the board");
    }

    /// <summary>The signer against signatures botocore (the AWS SDK for Python) makes for
    /// the same requests: AWS's test-suite credentials, date and host.</summary>
    static Task SigV4Vectors()
    {
        var credentials = new AwsCredentials("AKIDEXAMPLE", "wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY");
        var at = new DateTime(2015, 8, 30, 12, 36, 0, DateTimeKind.Utc);
        foreach (var c in new[]
        {
            new[] { "https://example.amazon.com/", "7ab4567ae243ee168f6bf18206b2b40b61ce08277323168138fa113ed23c538e" },
            new[] { "https://example.amazon.com/?Param2=value2&Param1=value1", "ca0a842792a27475df455b2925aa79d50a98e27d1733a46b57c22810e6b1a7bc" },
        })
        {
            var req = new HttpRequestMessage(HttpMethod.Get, c[0]);
            SigV4.Sign(req, null, credentials, "us-east-1", at, "service");
            string auth = string.Join(",", req.Headers.GetValues("Authorization"));
            Equal("AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20150830/us-east-1/service/aws4_request, SignedHeaders=host;x-amz-date, Signature=" + c[1], auth, c[0]);
        }
        return Task.FromResult(0);
    }

    static async Task LiveTop()
    {
        string lb = Tag + "-live";
        await Send(HttpMethod.Post, Api + "/leaderboards", "{\"leaderboard_id\":\"" + lb + "\",\"policy\":\"BEST\"}");
        for (int i = 0; i < 5; i++) await Score(lb, "seed" + i, "m", (100 + i).ToString());
        var seen = new List<KeyValuePair<long, LiveView>>();
        var clock = Stopwatch.StartNew();
        Func<Func<bool>, string, Task> until = async (ok, what) =>
        {
            var end = clock.ElapsedMilliseconds + 5000;
            while (true)
            {
                lock (seen) if (ok()) return;
                if (clock.ElapsedMilliseconds > end) throw new Exception("not within 5 s: " + what);
                await Task.Delay(20);
            }
        };
        using (var watch = As("ann").WatchTop(lb, 3, v => { lock (seen) seen.Add(new KeyValuePair<long, LiveView>(clock.ElapsedMilliseconds, v)); }, Realtime))
        {
            watch.Error += e => Console.WriteLine("# live view: " + e.Message);
            await until(() => seen.Count > 0, "the first read");
            var took = new List<long>();
            for (int i = 1; i <= 10; i++)
            {
                if (i == 6) await Send(HttpMethod.Post, Events + "/demo/drop", "{}", false);
                long sent = clock.ElapsedMilliseconds;
                await Score(lb, "c" + i, "m", (1000 + i).ToString());
                string p = "c" + i;
                await until(() => seen[seen.Count - 1].Value.Entries[0].PlayerId == p, p + " on top");
                lock (seen) took.Add(seen[seen.Count - 1].Key - sent);
                await Task.Delay(550);
            }
            List<long> versions;
            List<string> tops;
            lock (seen)
            {
                versions = seen.Select(s => s.Value.Version).ToList();
                tops = seen.Select(s => s.Value.Entries[0].PlayerId).Where(p => p.StartsWith("c")).ToList();
            }
            for (int i = 1; i < versions.Count; i++)
                if (versions[i] <= versions[i - 1]) throw new Exception("versions out of order: " + string.Join(",", versions));
            tops = tops.Where((p, i) => i == 0 || tops[i - 1] != p).ToList();
            Equal(string.Join(",", Enumerable.Range(1, 10).Select(i => "c" + i)), string.Join(",", tops), "each change, in order");
            took.Sort();
            Console.WriteLine("# live top (C#): write to update p50 " + took[4] + " ms, max " + took[9] + " ms");
        }
    }

    /// <summary>Answers each request with the next of `replies` (status, Retry-After
    /// seconds or -1, body), counting them: the transport's rules without a server.</summary>
    sealed class Scripted : HttpMessageHandler
    {
        readonly List<KeyValuePair<int, string>> replies;
        public int Calls;
        public Scripted(params KeyValuePair<int, string>[] replies) { this.replies = replies.ToList(); }

        protected override Task<HttpResponseMessage> SendAsync(HttpRequestMessage req, CancellationToken ct)
        {
            var reply = replies[Math.Min(Calls, replies.Count - 1)];
            Calls++;
            var res = new HttpResponseMessage((System.Net.HttpStatusCode)reply.Key)
            {
                Content = new StringContent(reply.Value, Encoding.UTF8, "application/json"),
            };
            if (reply.Key == 503 || reply.Key == 429) res.Headers.RetryAfter = new System.Net.Http.Headers.RetryConditionHeaderValue(TimeSpan.Zero);
            return Task.FromResult(res);
        }
    }

    static async Task Retries()
    {
        var busy = new KeyValuePair<int, string>(503, "{\"error\":{\"code\":\"store_unavailable\",\"message\":\"x\"}}");
        var ok = new KeyValuePair<int, string>(200, "{\"entries\":[],\"total\":0}");
        var twice = new Scripted(busy, busy, ok);
        var reader = new PlayerClient("http://api.invalid", () => Task.FromResult("t"), 4, new HttpClient(twice));
        await reader.Top("b");
        Equal(3, twice.Calls, "a read retried after two 503s");
        var always = new Scripted(busy);
        var bounded = new PlayerClient("http://api.invalid", () => Task.FromResult("t"), 3, new HttpClient(always));
        try { await bounded.Top("b"); throw new Exception("no error"); }
        catch (LeaderboardException e) { Equal("store_unavailable", e.Code, "the last answer's code"); }
        Equal(3, always.Calls, "at most `attempts` tries");
        var once = new Scripted(busy);
        var joiner = new PlayerClient("http://api.invalid", () => Task.FromResult("t"), 4, new HttpClient(once));
        try { await joiner.Join("t"); throw new Exception("no error"); }
        catch (LeaderboardException) { }
        Equal(1, once.Calls, "a join is sent once");
    }

    static async Task GatewayRefusals()
    {
        var cases = new[]
        {
            new[] { "401", "{\"message\":\"Unauthorized\"}", "unauthorized", "Unauthorized" },
            new[] { "403", "{\"message\":\"Forbidden\"}", "forbidden", "Forbidden" },
            new[] { "502", "<html>bad gateway</html>", "http_error", "<html>bad gateway</html>" },
        };
        foreach (var c in cases)
        {
            var refusing = new Scripted(new KeyValuePair<int, string>(int.Parse(c[0]), c[1]));
            var reader = new PlayerClient("http://api.invalid", () => Task.FromResult("t"), 1, new HttpClient(refusing));
            try { await reader.Top("b"); throw new Exception("no error"); }
            catch (LeaderboardException e)
            {
                Equal(int.Parse(c[0]), e.Status, "status");
                Equal(c[2], e.Code, "code of " + c[0]);
                Equal(c[3], e.Message.Substring(e.Message.Length - c[3].Length), "message of " + c[0]);
            }
        }
    }

    static int Main()
    {
        var tests = new List<KeyValuePair<string, Func<Task>>>
        {
            new KeyValuePair<string, Func<Task>>("a player's reads: rank, neighbours, top, entries, friends, a profile", Reads),
            new KeyValuePair<string, Func<Task>>("every other read: a walk, a board, results, history, tournaments, leagues, one's own profile", EveryOtherRead),
            new KeyValuePair<string, Func<Task>>("scores come back exactly as the board writes them", ExactScores),
            new KeyValuePair<string, Func<Task>>("errors carry the API's status, code, field and request id", Errors),
            new KeyValuePair<string, Func<Task>>("503s are retried after Retry-After, at most `attempts` tries; a join is sent once", Retries),
            new KeyValuePair<string, Func<Task>>("API Gateway's own refusals come back as unauthorized and forbidden", GatewayRefusals),
            new KeyValuePair<string, Func<Task>>("rank modes: unique, competition and dense, on reads and walks", RankModes),
            new KeyValuePair<string, Func<Task>>("a game server's calls, signed: results, a match, a tournament, profiles, bans, refusals", ServerCalls),
            new KeyValuePair<string, Func<Task>>("SigV4 signs as the AWS SDK signs", SigV4Vectors),
            new KeyValuePair<string, Func<Task>>("a live top view hears 10 of 10 changes in order across a forced reconnect", LiveTop),
        };
        int failed = 0, n = 0;
        foreach (var t in tests)
        {
            n++;
            try
            {
                t.Value().GetAwaiter().GetResult();
                Console.WriteLine("ok " + n + " - " + t.Key);
            }
            catch (Exception e)
            {
                failed++;
                Console.WriteLine("not ok " + n + " - " + t.Key + ": " + e);
            }
        }
        Console.WriteLine("# pass " + (n - failed) + ", fail " + failed);
        return failed == 0 ? 0 : 1;
    }
}
