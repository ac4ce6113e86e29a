// Live views (docs/operations.md, "The protocol a game client follows"): a board's top n,
// or a player's neighbourhood, kept current over the events API's WebSocket (AppSync
// Events in AWS, its stand-in locally), with no gap and no duplicate across reconnects.

import { parseExact } from "./exact.js";
import type { Exact } from "./index.js";
import type { components } from "./schema.js";

/** A view as a read or a push carries it; its scores as decimal strings. */
export type LiveView = Exact<components["schemas"]["LiveView"]>;

/** What a live view needs besides the API: the events API's real-time endpoint. */
export interface LiveOptions {
  /** `wss://<LiveEventsRealtimeEndpoint>/event/realtime` (the stack's output); locally
   * ws://127.0.0.1:3003/event/realtime. */
  realtimeUrl: string;
  /** The events API's HTTP host for the auth header (AWS: the `LiveEventsHttpEndpoint`
   * output's host); any value locally. */
  host?: string;
  /** A WebSocket class where there is no global one (Node 20: the `ws` package). */
  WebSocket?: new (url: string, protocols: string[]) => WebSocket;
  /** Reconnect backoff: full jitter under min(maxMs, baseMs * 2^try). */
  backoff?: { baseMs?: number; maxMs?: number };
  /** Called with what went wrong each time the view reconnects or fails to read. */
  onError?: (error: unknown) => void;
}

/** A running view; `close()` ends it. */
export interface Watch {
  close(): void;
  /** The view as last held (null before the first read). */
  readonly current: LiveView | null;
}

function base64url(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
}

/** Follows one view: `read` reads it over the API (learning its channel), `onUpdate`
 * hears every version in order. The protocol's steps:
 * connect and `connection_init`; subscribe before reading, so nothing falls between;
 * hold the read's version; skip a push not above it; take a push whose `previous` is
 * it; read again on any other (a gap); on a closed connection do it all again after a
 * jittered backoff; read at least every half hour, which keeps the view watched. */
export function follow(
  read: () => Promise<LiveView>,
  token: () => string | Promise<string>,
  onUpdate: (view: LiveView) => void,
  options: LiveOptions,
): Watch {
  const Socket = options.WebSocket ?? globalThis.WebSocket;
  const { baseMs = 200, maxMs = 10_000 } = options.backoff ?? {};
  let held: LiveView | null = null;
  let closed = false;
  let socket: WebSocket | undefined;
  let failures = 0;

  const hold = (view: LiveView) => {
    if (held && view.version <= held.version) return;
    held = view;
    onUpdate(view);
  };
  const reread = () => read().then(hold, (e) => options.onError?.(e));

  const connect = async () => {
    if (closed) return;
    let channel: string;
    let jwt: string;
    try {
      const first = await read();
      hold(first);
      channel = first.channel ?? "";
      jwt = await token();
    } catch (error) {
      options.onError?.(error);
      return retry();
    }
    const auth = base64url(JSON.stringify({ host: options.host ?? new URL(options.realtimeUrl).host, Authorization: jwt }));
    const ws = new Socket(options.realtimeUrl, ["aws-appsync-event-ws", `header-${auth}`]);
    socket = ws;
    ws.onopen = () => ws.send(JSON.stringify({ type: "connection_init" }));
    ws.onmessage = (message: MessageEvent) => {
      const msg = JSON.parse(String(message.data));
      if (msg.type === "connection_ack") {
        ws.send(JSON.stringify({ type: "subscribe", id: "view", channel }));
      } else if (msg.type === "subscribe_success") {
        failures = 0;
        void reread();
      } else if (msg.type === "data") {
        const push = parseView(msg.event);
        if (!held || push.version <= held.version) return;
        if (push.previous === held.version) hold(push);
        else void reread();
      } else if (msg.type === "connection_error" || msg.type === "subscribe_error" || msg.type === "error") {
        options.onError?.(msg);
        ws.close();
      }
    };
    ws.onclose = () => {
      if (socket === ws) retry();
    };
  };

  const retry = () => {
    if (closed) return;
    socket = undefined;
    failures += 1;
    const bound = Math.min(maxMs, baseMs * 2 ** failures);
    setTimeout(() => void connect(), Math.random() * bound);
  };

  void connect();
  const refresh = setInterval(() => void reread(), 30 * 60 * 1000);
  return {
    close() {
      closed = true;
      clearInterval(refresh);
      socket?.close();
    },
    get current() {
      return held;
    },
  };
}

/** A push's event: the view as JSON text (a string), its scores kept as their text. */
function parseView(event: unknown): LiveView {
  return parseExact(typeof event === "string" ? event : JSON.stringify(event)) as LiveView;
}
