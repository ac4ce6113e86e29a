// The player's and the game server's clients: each route a path and a retry rule over
// the shared transport.
#include <regex>

#include "transport.hpp"

namespace leaderboard {

namespace {

std::string mode_param(RankMode mode) {
  switch (mode) {
    case RankMode::competition:
      return "&rank_mode=competition";
    case RankMode::dense:
      return "&rank_mode=dense";
    case RankMode::unique:
      break;
  }
  return "";
}

std::string lb(const std::string& board) { return "/leaderboards/" + escape(board); }

/// A score as a JSON number exactly as written; anything else is refused here rather
/// than rounded.
const std::string& decimal(const std::string& score) {
  static const std::regex pattern("^-?(0|[1-9][0-9]*)(\\.[0-9]+)?$");
  if (!std::regex_match(score, pattern)) throw std::invalid_argument("a score is decimal text, e.g. \"83.417\": " + score);
  return score;
}

std::string result_body(const std::string& score, const std::string& match_id, const Json& metadata) {
  std::string body = "{\"new_score\":" + decimal(score) + ",\"match_id\":" + Json(match_id).dump();
  if (!metadata.is_null()) body += ",\"metadata\":" + metadata.dump();
  return body + "}";
}

}  // namespace

PlayerClient::PlayerClient(std::string base_url, std::function<std::string()> token, Retry retry)
    : token_(std::move(token)) {
  auto get_token = token_;
  transport_ = std::make_unique<Transport>(std::move(base_url), retry,
                                           [get_token](const std::string&, const std::string&, const std::string&) {
                                             return Transport::Headers{{"authorization", "Bearer " + get_token()}};
                                           });
}

PlayerClient::~PlayerClient() = default;

Json PlayerClient::rank(const std::string& board, const std::string& player, int k, RankMode mode) {
  return transport_->call("GET", lb(board) + "/players/" + escape(player) + "/rank?k=" + std::to_string(k) + mode_param(mode),
                          std::nullopt, true);
}

Json PlayerClient::friends(const std::string& board, const std::string& player, int k, RankMode mode) {
  return transport_->call(
      "GET", lb(board) + "/players/" + escape(player) + "/friends-rank?k=" + std::to_string(k) + mode_param(mode),
      std::nullopt, true);
}

Json PlayerClient::top(const std::string& board, int n, RankMode mode) {
  return transport_->call("GET", lb(board) + "/top?n=" + std::to_string(n) + mode_param(mode), std::nullopt, true);
}

Json PlayerClient::entries(const std::string& board, const std::vector<std::string>& players, RankMode mode) {
  std::string list;
  for (const auto& p : players) list += (list.empty() ? "" : ",") + p;
  return transport_->call("GET", lb(board) + "/entries?players=" + escape(list) + mode_param(mode), std::nullopt, true);
}

Json PlayerClient::ranks(const std::string& board, int limit, const std::optional<std::string>& cursor, RankMode mode) {
  std::string q = "?limit=" + std::to_string(limit) + (cursor ? "&cursor=" + escape(*cursor) : "") + mode_param(mode);
  return transport_->call("GET", lb(board) + "/ranks" + q, std::nullopt, true);
}

void PlayerClient::walk(const std::string& board, const std::function<bool(const Json&)>& each, int limit,
                        RankMode mode) {
  std::optional<std::string> cursor;
  do {
    Json page = ranks(board, limit, cursor, mode);
    for (const Json& entry : page["entries"])
      if (!each(entry)) return;
    cursor = page.contains("next_cursor") && page["next_cursor"].is_string()
                 ? std::optional<std::string>(page["next_cursor"].get<std::string>())
                 : std::nullopt;
  } while (cursor);
}

Json PlayerClient::board(const std::string& board) { return transport_->call("GET", lb(board), std::nullopt, true); }

Json PlayerClient::results(const std::string& board) {
  return transport_->call("GET", lb(board) + "/results", std::nullopt, true);
}

Json PlayerClient::history(const std::string& game, const std::string& mode, const std::string& player) {
  return transport_->call("GET", "/games/" + escape(game) + "/modes/" + escape(mode) + "/players/" + escape(player) + "/history",
                          std::nullopt, true);
}

Json PlayerClient::profile(const std::string& player) {
  return transport_->call("GET", "/players/" + escape(player) + "/profile", std::nullopt, true);
}

Json PlayerClient::set_my_profile(const Json& profile) {
  return transport_->call("PUT", "/me/profile", profile.dump(), true);
}

Json PlayerClient::rewards() { return transport_->call("GET", "/me/rewards", std::nullopt, true); }

Json PlayerClient::claim(const std::string& reward_id) {
  return transport_->call("POST", "/me/rewards/" + escape(reward_id) + "/claim", std::nullopt, true);
}

Json PlayerClient::tournament(const std::string& tournament) {
  return transport_->call("GET", "/tournaments/" + escape(tournament), std::nullopt, true);
}

Json PlayerClient::join(const std::string& tournament) {
  return transport_->call("POST", "/tournaments/" + escape(tournament) + "/join", std::nullopt, false);
}

Json PlayerClient::cohort(const std::string& tournament, const std::string& player) {
  return transport_->call("GET", "/tournaments/" + escape(tournament) + "/players/" + escape(player) + "/cohort",
                          std::nullopt, true);
}

Json PlayerClient::league(const std::string& tournament, const std::string& player) {
  return transport_->call("GET", "/tournaments/" + escape(tournament) + "/players/" + escape(player) + "/league",
                          std::nullopt, true);
}

Json PlayerClient::live_top(const std::string& board, int n) {
  return transport_->call("GET", lb(board) + "/live/top?n=" + std::to_string(n), std::nullopt, true);
}

Json PlayerClient::live_me(const std::string& board, const std::string& player, int k) {
  return transport_->call("GET", lb(board) + "/players/" + escape(player) + "/live?k=" + std::to_string(k), std::nullopt,
                          true);
}

ServerClient::ServerClient(std::string base_url, std::string region, std::function<Credentials()> credentials,
                           Retry retry) {
  auto source = credentials ? std::move(credentials) : std::function<Credentials()>(Credentials::from_environment);
  transport_ = std::make_unique<Transport>(
      std::move(base_url), retry,
      [source, region](const std::string& method, const std::string& url, const std::string& body) {
        return sign_v4(method, url, body, source(), region, amz_date_now());
      });
}

ServerClient::~ServerClient() = default;

Json ServerClient::submit_score(const std::string& board, const std::string& player, const std::string& score,
                                const std::string& match_id, const Json& metadata) {
  return transport_->call("POST", lb(board) + "/players/" + escape(player) + "/score",
                          result_body(score, match_id, metadata), true);
}

Json ServerClient::submit_match(const Json& match) { return transport_->call("POST", "/scores", match.dump(), true); }
Json ServerClient::submit_whole_match(const Json& match) { return transport_->call("POST", "/matches", match.dump(), true); }

Json ServerClient::join_tournament(const std::string& tournament, const std::string& player) {
  return transport_->call("POST", "/tournaments/" + escape(tournament) + "/players/" + escape(player) + "/join",
                          std::nullopt, false);
}

Json ServerClient::submit_tournament_score(const std::string& tournament, const std::string& player,
                                           const std::string& score, const std::string& match_id) {
  return transport_->call("POST", "/tournaments/" + escape(tournament) + "/players/" + escape(player) + "/score",
                          result_body(score, match_id, nullptr), true);
}

Json ServerClient::set_profile(const std::string& player, const Json& profile) {
  return transport_->call("PUT", "/players/" + escape(player) + "/profile", profile.dump(), true);
}

Json ServerClient::rewards(const std::string& player) {
  return transport_->call("GET", "/players/" + escape(player) + "/rewards", std::nullopt, true);
}

Json ServerClient::claim(const std::string& player, const std::string& reward_id) {
  return transport_->call("POST", "/players/" + escape(player) + "/rewards/" + escape(reward_id) + "/claim", std::nullopt,
                          true);
}

Json ServerClient::ban(const std::string& game, const std::string& player, const std::string& reason) {
  return transport_->call("PUT", "/games/" + escape(game) + "/bans/" + escape(player), Json{{"reason", reason}}.dump(),
                          true);
}

Json ServerClient::unban(const std::string& game, const std::string& player, const std::string& reason) {
  return transport_->call("DELETE", "/games/" + escape(game) + "/bans/" + escape(player),
                          Json{{"reason", reason}}.dump(), true);
}

Json ServerClient::call(const std::string& method, const std::string& path, const std::optional<std::string>& body,
                        bool retry) {
  return transport_->call(method, path, body, retry);
}

}  // namespace leaderboard
