// The clients' shared HTTP transport (not part of the public header).
#pragma once

#include <leaderboard/leaderboard.hpp>

namespace leaderboard {

/// The current time as SigV4 writes it (`YYYYMMDDTHHMMSSZ`).
std::string amz_date_now();

/// A call with its authorization added (the headers `Authorize` returns for the method,
/// URL and body), retried on 429, 503 and network errors when the caller says it is safe
/// to, after what Retry-After asks or a jittered backoff; an error reply thrown as Error.
class Transport {
 public:
  using Headers = std::vector<std::pair<std::string, std::string>>;
  using Authorize = std::function<Headers(const std::string& method, const std::string& url, const std::string& body)>;

  Transport(std::string base_url, Retry retry, Authorize authorize);
  ~Transport();
  Json call(const std::string& method, const std::string& path, const std::optional<std::string>& body, bool retry);

 private:
  static Error error_of(long status, const std::string& text);
  std::chrono::milliseconds backoff(int attempt, double asked_s);
  struct Handle;
  std::string base_;
  Retry retry_;
  Authorize authorize_;
  std::unique_ptr<Handle> handle_;
};

}  // namespace leaderboard
