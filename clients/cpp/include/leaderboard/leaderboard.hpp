// The leaderboard service's C++17 client, for Unreal and native engines and for game
// servers (docs/clients.md): a player's reads with the game's own sign-in, a game
// server's calls signed with SigV4, retries as the server makes them safe, errors as
// leaderboard::Error, scores as the decimal text the board wrote, and live views over the
// events API's WebSocket. HTTP on libcurl, TLS and SigV4 on OpenSSL, JSON on nlohmann.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace leaderboard {

using Json = nlohmann::json;

/// An error reply: its HTTP status, the API's stable code (`board_not_found`, ...;
/// `unauthorized` / `forbidden` for API Gateway's own refusals of a token or signature,
/// `http_error` for any other body, `network_error` with status 0 when no reply came),
/// the field it names and the request id.
class Error : public std::runtime_error {
 public:
  Error(int status, std::string code, const std::string& message, std::string field = {},
        std::string request_id = {});
  int status;
  std::string code;
  std::string field;
  std::string request_id;
};

/// Parses a reply with every score field (`score`, `previous_score`, `points_to_next`,
/// `best`, `value`) as a string of its exact digits; every other number stays a number,
/// and a game's own `metadata` and `attributes` are kept as they came.
Json parse_exact(const std::string& text);

/// How requests are retried: on 429 and 503 (waiting what Retry-After asks) and on
/// network errors, with jitter, at most `attempts` tries in all, only for calls the
/// server makes safe to repeat (reads, PUTs, results with a match id).
struct Retry {
  int attempts = 4;
  std::chrono::milliseconds base{100};
  std::chrono::milliseconds max{5000};
};

/// How equal scores share places: unique 1, 2, 3, 4 (the default); competition 1, 2, 2, 4;
/// dense 1, 2, 2, 3 (on a board that keeps dense ranks).
enum class RankMode { unique, competition, dense };

class Transport;

/// A live view kept current over the events API (docs/operations.md's protocol): the view
/// read, its channel subscribed, then read again; a push is taken when its `previous` is
/// the held version, skipped when not newer, and the view read again otherwise; after a
/// dropped connection it does all again after a jittered backoff. The callback runs on the
/// watch's own thread. Destroying the watch stops it.
class LiveWatch {
 public:
  ~LiveWatch();
  LiveWatch(const LiveWatch&) = delete;
  LiveWatch& operator=(const LiveWatch&) = delete;
  /// The view as last held (null before the first read).
  Json current() const;
  /// Times the WebSocket was (re)connected.
  int connections() const;
  struct State;

 private:
  friend class PlayerClient;
  explicit LiveWatch(std::shared_ptr<State> state);
  std::shared_ptr<State> state_;
};

/// A player's client: the player routes, authorized by the game's own sign-in.
class PlayerClient {
 public:
  /// `base_url`: the API (the stack's ApiUrl output); `token`: gives the player's current
  /// token (a JWT), asked per request.
  PlayerClient(std::string base_url, std::function<std::string()> token, Retry retry = {});
  ~PlayerClient();

  Json rank(const std::string& board, const std::string& player, int k = 0, RankMode mode = RankMode::unique);
  Json friends(const std::string& board, const std::string& player, int k = 0, RankMode mode = RankMode::unique);
  Json top(const std::string& board, int n = 10, RankMode mode = RankMode::unique);
  Json entries(const std::string& board, const std::vector<std::string>& players, RankMode mode = RankMode::unique);
  /// One page of a walk; pass its `next_cursor` to the next call (none on the last page).
  Json ranks(const std::string& board, int limit = 100, const std::optional<std::string>& cursor = std::nullopt,
             RankMode mode = RankMode::unique);
  /// Walks a whole board in order a page at a time; `each` returns false to stop.
  void walk(const std::string& board, const std::function<bool(const Json&)>& each, int limit = 100,
            RankMode mode = RankMode::unique);
  Json board(const std::string& board);
  Json results(const std::string& board);
  Json history(const std::string& game, const std::string& mode, const std::string& player);
  Json profile(const std::string& player);
  Json set_my_profile(const Json& profile);
  /// The calling player's rewards (docs/rewards.md): `rewards` to claim, and `claimed`.
  Json rewards();
  /// Claims one of the calling player's rewards, exactly once; retried, as a retry (or a
  /// claim at the same time) answers the first claim (`replayed` true).
  Json claim(const std::string& reward_id);
  Json tournament(const std::string& tournament);
  /// Joins the calling player to a tournament's current occurrence (sent once).
  Json join(const std::string& tournament);
  Json cohort(const std::string& tournament, const std::string& player);
  Json league(const std::string& tournament, const std::string& player);
  Json live_top(const std::string& board, int n);
  Json live_me(const std::string& board, const std::string& player, int k);

  /// Keeps a board's top `n` current; `realtime_url` is the events API's real-time
  /// endpoint (wss://<LiveEventsRealtimeEndpoint>/event/realtime), `host` its HTTP host
  /// (the URL's own when empty).
  std::unique_ptr<LiveWatch> watch_top(const std::string& board, int n, std::function<void(const Json&)> on_update,
                                       const std::string& realtime_url, const std::string& host = {});
  /// Keeps the player's own neighbourhood (rank +- k) current.
  std::unique_ptr<LiveWatch> watch_me(const std::string& board, const std::string& player, int k,
                                      std::function<void(const Json&)> on_update, const std::string& realtime_url,
                                      const std::string& host = {});

 private:
  std::unique_ptr<LiveWatch> watch(std::function<Json()> read, std::function<void(const Json&)> on_update,
                                   const std::string& realtime_url, const std::string& host);
  std::function<std::string()> token_;
  std::unique_ptr<Transport> transport_;
};

/// AWS credentials: an access key pair and, for temporary ones (a role's, e.g. a GameLift
/// fleet's), a session token.
struct Credentials {
  std::string access_key_id;
  std::string secret_access_key;
  std::string session_token;
  /// From AWS_ACCESS_KEY_ID, AWS_SECRET_ACCESS_KEY and AWS_SESSION_TOKEN; throws when unset.
  static Credentials from_environment();
};

/// The SigV4 headers (`authorization`, `x-amz-date`, and `x-amz-security-token`) for a
/// request to `url` with `body`, as execute-api checks them: the path as sent encoded once
/// more, the query's names and values encoded by RFC 3986 and sorted, `host` and
/// `x-amz-date` signed, the body's SHA-256. `amz_date` is `YYYYMMDDTHHMMSSZ`.
std::vector<std::pair<std::string, std::string>> sign_v4(const std::string& method, const std::string& url,
                                                         const std::string& body, const Credentials& credentials,
                                                         const std::string& region, const std::string& amz_date,
                                                         const std::string& service = "execute-api");

/// A game server's client: the server-only routes, signed with SigV4.
class ServerClient {
 public:
  /// `credentials`: asked per request (refresh them there); empty: the environment's.
  ServerClient(std::string base_url, std::string region, std::function<Credentials()> credentials = {},
               Retry retry = {});
  ~ServerClient();

  /// Posts one match result; `score` is decimal text (e.g. "83.417"), sent as written.
  /// Exactly-once by its match id, so it is retried: a retry answers the first outcome.
  Json submit_score(const std::string& board, const std::string& player, const std::string& score,
                    const std::string& match_id, const Json& metadata = nullptr);
  /// One player's result of a match on a family's boards (`POST /scores`); retried.
  Json submit_match(const Json& match);
  /// A whole match's results, up to 100 players, in one request (`POST /matches`): one
  /// outcome per player under `players`, each with its own `status`; retried.
  Json submit_whole_match(const Json& match);
  /// Seats a player in a tournament's current occurrence (sent once).
  Json join_tournament(const std::string& tournament, const std::string& player);
  Json submit_tournament_score(const std::string& tournament, const std::string& player, const std::string& score,
                               const std::string& match_id);
  Json set_profile(const std::string& player, const Json& profile);
  /// A player's rewards, and a claim of one for them (exactly once; retried).
  Json rewards(const std::string& player);
  Json claim(const std::string& player, const std::string& reward_id);
  /// Bans are the operators' routes: the signer needs the operators' permissions.
  Json ban(const std::string& game, const std::string& player, const std::string& reason);
  Json unban(const std::string& game, const std::string& player, const std::string& reason);
  /// Any other server route, signed (e.g. `POST /leaderboards` with a board's definition);
  /// `retry` only when the call is safe to repeat.
  Json call(const std::string& method, const std::string& path, const std::optional<std::string>& body, bool retry);

 private:
  std::unique_ptr<Transport> transport_;
};

/// A path segment or query value percent-encoded (RFC 3986: only A-Z a-z 0-9 - _ . ~ stay).
std::string escape(const std::string& text);

}  // namespace leaderboard
