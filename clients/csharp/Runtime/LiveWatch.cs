// A live view kept current over the events API's WebSocket (AppSync Events in AWS, its
// stand-in locally), as docs/operations.md's protocol says: connect and connection_init;
// read the view to learn its channel; subscribe, then read again and hold its version;
// skip a push not above it, take one whose previous is it, read again on any other;
// after a closed connection, do it all again after a jittered backoff.
using System;
using System.Collections.Generic;
using System.Net.WebSockets;
using System.Text;
using System.Threading;
using System.Threading.Tasks;

namespace Leaderboard
{
    public sealed class LiveWatch : IDisposable
    {
        readonly Func<Task<LiveView>> read;
        readonly Func<Task<string>> token;
        readonly Action<LiveView> onUpdate;
        readonly Uri realtime;
        readonly string host;
        readonly CancellationTokenSource stop = new CancellationTokenSource();
        readonly object gate = new object();
        readonly Random jitter = new Random();
        LiveView held;

        /// <summary>The view as last held (null before the first read).</summary>
        public LiveView Current { get { lock (gate) return held; } }

        /// <summary>Reported each time the view reconnects or a read fails.</summary>
        public event Action<Exception> Error;

        internal LiveWatch(Func<Task<LiveView>> read, Func<Task<string>> token, Action<LiveView> onUpdate,
            string realtimeUrl, string host)
        {
            this.read = read;
            this.token = token;
            this.onUpdate = onUpdate;
            realtime = new Uri(realtimeUrl);
            this.host = host ?? realtime.Authority;
            Task.Run(Run);
        }

        public void Dispose() { stop.Cancel(); }

        void Hold(LiveView view)
        {
            lock (gate)
            {
                if (held != null && view.Version <= held.Version) return;
                held = view;
            }
            onUpdate(view);
        }

        async Task Reread()
        {
            try { Hold(await read()); }
            catch (Exception e) { if (Error != null) Error(e); }
        }

        async Task Run()
        {
            int failures = 0;
            while (!stop.IsCancellationRequested)
            {
                try
                {
                    await Session();
                    failures = 0;
                }
                catch (Exception e)
                {
                    if (stop.IsCancellationRequested) return;
                    if (Error != null) Error(e);
                }
                failures++;
                double bound = Math.Min(10000, 200 * Math.Pow(2, Math.Min(failures, 10)));
                try { await Task.Delay(TimeSpan.FromMilliseconds(jitter.NextDouble() * bound), stop.Token); }
                catch (TaskCanceledException) { return; }
            }
        }

        static string Base64Url(string text)
        {
            return Convert.ToBase64String(Encoding.UTF8.GetBytes(text)).TrimEnd('=').Replace('+', '-').Replace('/', '_');
        }

        /// <summary>One connection's life: until it closes (or the watch stops).</summary>
        async Task Session()
        {
            var first = await read();
            Hold(first);
            string auth = "{\"host\":" + Json.Quote(host) + ",\"Authorization\":" + Json.Quote(await token()) + "}";
            using (var ws = new ClientWebSocket())
            {
                ws.Options.AddSubProtocol("aws-appsync-event-ws");
                ws.Options.AddSubProtocol("header-" + Base64Url(auth));
                await ws.ConnectAsync(realtime, stop.Token);
                await Send(ws, "{\"type\":\"connection_init\"}");
                while (ws.State == WebSocketState.Open && !stop.IsCancellationRequested)
                {
                    string text = await Receive(ws);
                    if (text == null) return;
                    var msg = (Dictionary<string, object>)Json.Parse(text);
                    string type = Reply.Text(msg, "type");
                    if (type == "connection_ack")
                    {
                        await Send(ws, "{\"type\":\"subscribe\",\"id\":\"view\",\"channel\":" + Json.Quote(first.Channel) + "}");
                    }
                    else if (type == "subscribe_success")
                    {
                        await Reread();
                    }
                    else if (type == "data")
                    {
                        object e = msg["event"];
                        var push = new LiveView((Dictionary<string, object>)(e is string ? Json.Parse((string)e) : e));
                        LiveView now = Current;
                        if (now == null || push.Version <= now.Version) continue;
                        if (push.Previous == now.Version) Hold(push);
                        else await Reread();
                    }
                    else if (type == "connection_error" || type == "subscribe_error" || type == "error")
                    {
                        throw new InvalidOperationException("events API: " + text);
                    }
                }
            }
        }

        async Task Send(ClientWebSocket ws, string text)
        {
            var bytes = new ArraySegment<byte>(Encoding.UTF8.GetBytes(text));
            await ws.SendAsync(bytes, WebSocketMessageType.Text, true, stop.Token);
        }

        /// <summary>One whole text message, or null when the connection closed.</summary>
        async Task<string> Receive(ClientWebSocket ws)
        {
            var buffer = new byte[16384];
            var all = new List<byte>();
            while (true)
            {
                var got = await ws.ReceiveAsync(new ArraySegment<byte>(buffer), stop.Token);
                if (got.MessageType == WebSocketMessageType.Close) return null;
                for (int i = 0; i < got.Count; i++) all.Add(buffer[i]);
                if (got.EndOfMessage) return Encoding.UTF8.GetString(all.ToArray());
            }
        }
    }
}
