// The HTTP side both clients share (libcurl), errors, exact JSON (nlohmann's SAX
// interface, which hands over each number's own text) and SigV4 (OpenSSL).
#include "transport.hpp"

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <mutex>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include <curl/curl.h>
#include <openssl/hmac.h>
#include <openssl/sha.h>

namespace leaderboard {

Error::Error(int status_, std::string code_, const std::string& message, std::string field_, std::string request_id_)
    : std::runtime_error(std::to_string(status_) + " " + code_ + ": " + message),
      status(status_),
      code(std::move(code_)),
      field(std::move(field_)),
      request_id(std::move(request_id_)) {}

namespace {

// The reply fields that carry a score, at their places in the document (never inside a
// game's own `metadata` or `attributes`).
const std::set<std::string> kScoreKeys = {"score", "previous_score", "points_to_next", "best", "value"};
const std::set<std::string> kOpaqueKeys = {"metadata", "attributes"};

// Builds the document from nlohmann's SAX events: a score field's number is kept as the
// text it arrived as.
class ExactBuilder : public nlohmann::json_sax<Json> {
 public:
  Json root;

  bool null() override { return put(nullptr); }
  bool boolean(bool v) override { return put(v); }
  bool number_integer(number_integer_t v) override { return number(Json(v), std::to_string(v)); }
  bool number_unsigned(number_unsigned_t v) override { return number(Json(v), std::to_string(v)); }
  bool number_float(number_float_t v, const string_t& text) override { return number(Json(v), text); }
  bool string(string_t& v) override { return put(v); }
  bool binary(binary_t&) override { return false; }
  bool start_object(std::size_t) override { return open(Json::object()); }
  bool key(string_t& k) override {
    frames_.back().key = k;
    return true;
  }
  bool end_object() override { return close(); }
  bool start_array(std::size_t) override { return open(Json::array()); }
  bool end_array() override { return close(); }
  bool parse_error(std::size_t, const std::string&, const nlohmann::detail::exception& e) override {
    throw Error(0, "invalid_reply", std::string("the reply is not JSON: ") + e.what());
  }

 private:
  struct Frame {
    Json* node;
    bool opaque;
    std::string key;
  };
  std::vector<Frame> frames_;

  Json* place(Json v) {
    if (frames_.empty()) {
      root = std::move(v);
      return &root;
    }
    Json& c = *frames_.back().node;
    if (c.is_array()) {
      c.push_back(std::move(v));
      return &c.back();
    }
    Json& slot = c[frames_.back().key];
    slot = std::move(v);
    return &slot;
  }
  bool put(Json v) {
    place(std::move(v));
    return true;
  }
  bool in_object() const { return !frames_.empty() && frames_.back().node->is_object(); }
  bool opaque_here() const { return !frames_.empty() && frames_.back().opaque; }
  bool number(Json v, const std::string& text) {
    if (in_object() && !opaque_here() && kScoreKeys.count(frames_.back().key)) return put(text);
    return put(std::move(v));
  }
  bool open(Json v) {
    bool opaque = opaque_here() || (in_object() && kOpaqueKeys.count(frames_.back().key));
    frames_.push_back({place(std::move(v)), opaque, {}});
    return true;
  }
  bool close() {
    frames_.pop_back();
    return true;
  }
};

std::once_flag curl_once;

size_t collect(char* data, size_t size, size_t n, void* out) {
  static_cast<std::string*>(out)->append(data, size * n);
  return size * n;
}

size_t header_line(char* data, size_t size, size_t n, void* out) {
  std::string line(data, size * n);
  std::string lower = line;
  std::transform(lower.begin(), lower.end(), lower.begin(), [](unsigned char c) { return std::tolower(c); });
  if (lower.rfind("retry-after:", 0) == 0) {
    *static_cast<double*>(out) = std::atof(line.c_str() + 12);
  }
  return size * n;
}

std::string hex(const unsigned char* bytes, size_t n) {
  static const char* digits = "0123456789abcdef";
  std::string out;
  for (size_t i = 0; i < n; i++) {
    out += digits[bytes[i] >> 4];
    out += digits[bytes[i] & 15];
  }
  return out;
}

std::string sha256_hex(const std::string& data) {
  unsigned char out[SHA256_DIGEST_LENGTH];
  SHA256(reinterpret_cast<const unsigned char*>(data.data()), data.size(), out);
  return hex(out, sizeof out);
}

std::string hmac(const std::string& key, const std::string& data) {
  unsigned char out[EVP_MAX_MD_SIZE];
  unsigned int len = 0;
  HMAC(EVP_sha256(), key.data(), static_cast<int>(key.size()), reinterpret_cast<const unsigned char*>(data.data()),
       data.size(), out, &len);
  return std::string(reinterpret_cast<char*>(out), len);
}

std::string unescape(const std::string& text) {
  std::string out;
  for (size_t i = 0; i < text.size(); i++) {
    if (text[i] == '%' && i + 2 < text.size() + 0 && std::isxdigit(static_cast<unsigned char>(text[i + 1])) &&
        std::isxdigit(static_cast<unsigned char>(text[i + 2]))) {
      out += static_cast<char>(std::stoi(text.substr(i + 1, 2), nullptr, 16));
      i += 2;
    } else {
      out += text[i];
    }
  }
  return out;
}

}  // namespace

Json parse_exact(const std::string& text) {
  ExactBuilder builder;
  Json::sax_parse(text, &builder);
  return std::move(builder.root);
}

std::string escape(const std::string& text) {
  static const char* digits = "0123456789ABCDEF";
  std::string out;
  for (unsigned char c : text) {
    if (std::isalnum(c) || c == '-' || c == '_' || c == '.' || c == '~') {
      out += static_cast<char>(c);
    } else {
      out += '%';
      out += digits[c >> 4];
      out += digits[c & 15];
    }
  }
  return out;
}

Credentials Credentials::from_environment() {
  const char* id = std::getenv("AWS_ACCESS_KEY_ID");
  const char* secret = std::getenv("AWS_SECRET_ACCESS_KEY");
  const char* token = std::getenv("AWS_SESSION_TOKEN");
  if (!id || !*id || !secret || !*secret) throw std::runtime_error("AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY are not set");
  return {id, secret, token ? token : ""};
}

std::vector<std::pair<std::string, std::string>> sign_v4(const std::string& method, const std::string& url,
                                                         const std::string& body, const Credentials& credentials,
                                                         const std::string& region, const std::string& amz_date,
                                                         const std::string& service) {
  // scheme://authority/path?query, as sent.
  size_t start = url.find("://");
  start = start == std::string::npos ? 0 : start + 3;
  size_t slash = url.find('/', start);
  std::string authority = url.substr(start, slash == std::string::npos ? std::string::npos : slash - start);
  std::string rest = slash == std::string::npos ? "/" : url.substr(slash);
  size_t q = rest.find('?');
  std::string path = rest.substr(0, q), query = q == std::string::npos ? "" : rest.substr(q + 1);

  std::string canonical_path;
  for (size_t i = 0, next; i <= path.size(); i = next + 1) {
    next = path.find('/', i);
    if (next == std::string::npos) next = path.size();
    if (i > 0) canonical_path += '/';
    canonical_path += escape(path.substr(i, next - i));
  }
  std::vector<std::pair<std::string, std::string>> pairs;
  for (size_t i = 0, next; !query.empty() && i <= query.size(); i = next + 1) {
    next = query.find('&', i);
    if (next == std::string::npos) next = query.size();
    std::string pair = query.substr(i, next - i);
    size_t eq = pair.find('=');
    pairs.emplace_back(escape(unescape(pair.substr(0, eq))),
                       eq == std::string::npos ? "" : escape(unescape(pair.substr(eq + 1))));
  }
  std::sort(pairs.begin(), pairs.end());
  std::string canonical_query;
  for (const auto& [k, v] : pairs) canonical_query += (canonical_query.empty() ? "" : "&") + k + "=" + v;

  std::vector<std::pair<std::string, std::string>> headers = {{"host", authority}, {"x-amz-date", amz_date}};
  if (!credentials.session_token.empty()) headers.emplace_back("x-amz-security-token", credentials.session_token);
  std::string canonical_headers, signed_headers;
  for (const auto& [k, v] : headers) {
    canonical_headers += k + ":" + v + "\n";
    signed_headers += (signed_headers.empty() ? "" : ";") + k;
  }
  std::string canonical = method + "\n" + canonical_path + "\n" + canonical_query + "\n" + canonical_headers + "\n" +
                          signed_headers + "\n" + sha256_hex(body);
  std::string date = amz_date.substr(0, 8);
  std::string scope = date + "/" + region + "/" + service + "/aws4_request";
  std::string to_sign = "AWS4-HMAC-SHA256\n" + amz_date + "\n" + scope + "\n" + sha256_hex(canonical);
  std::string key = hmac("AWS4" + credentials.secret_access_key, date);
  for (const std::string& part : {region, service, std::string("aws4_request")}) key = hmac(key, part);
  std::string signature = hmac(key, to_sign);
  std::vector<std::pair<std::string, std::string>> out = {
      {"authorization", "AWS4-HMAC-SHA256 Credential=" + credentials.access_key_id + "/" + scope +
                            ", SignedHeaders=" + signed_headers +
                            ", Signature=" + hex(reinterpret_cast<const unsigned char*>(signature.data()), signature.size())},
      {"x-amz-date", amz_date}};
  if (!credentials.session_token.empty()) out.emplace_back("x-amz-security-token", credentials.session_token);
  return out;
}

std::string amz_date_now() {
  std::time_t now = std::time(nullptr);
  std::tm utc{};
  gmtime_r(&now, &utc);
  char buf[17];
  std::strftime(buf, sizeof buf, "%Y%m%dT%H%M%SZ", &utc);
  return buf;
}

struct Transport::Handle {
  CURL* curl = nullptr;
  std::mutex lock;
  std::mt19937 jitter{std::random_device{}()};
  ~Handle() {
    if (curl) curl_easy_cleanup(curl);
  }
};

Transport::Transport(std::string base_url, Retry retry, Authorize authorize)
    : base_(std::move(base_url)), retry_(retry), authorize_(std::move(authorize)), handle_(new Handle) {
  std::call_once(curl_once, [] { curl_global_init(CURL_GLOBAL_DEFAULT); });
  while (!base_.empty() && base_.back() == '/') base_.pop_back();
  handle_->curl = curl_easy_init();
}

Transport::~Transport() = default;

Error Transport::error_of(long status, const std::string& text) {
  Json body;
  try {
    body = Json::parse(text);
  } catch (const std::exception&) {
    return Error(static_cast<int>(status), "http_error", text);
  }
  auto str = [](const Json& o, const char* k) { return o.contains(k) && o[k].is_string() ? o[k].get<std::string>() : ""; };
  if (body.is_object() && body.contains("error") && body["error"].is_object()) {
    const Json& e = body["error"];
    return Error(static_cast<int>(status), str(e, "code"), str(e, "message"), str(e, "field"), str(e, "request_id"));
  }
  // API Gateway's own refusal of a token or a signature: `{"message": ...}`.
  std::string message = body.is_object() ? str(body, "message") : "";
  std::string code = status == 401 ? "unauthorized" : status == 403 ? "forbidden" : "http_error";
  return Error(static_cast<int>(status), code, message.empty() ? text : message);
}

std::chrono::milliseconds Transport::backoff(int attempt, double asked_s) {
  auto bound = std::min<long long>(retry_.max.count(), retry_.base.count() << std::min(attempt, 16));
  std::uniform_int_distribution<long long> pick(0, std::max<long long>(bound, 0));
  long long ms;
  {
    std::lock_guard<std::mutex> g(handle_->lock);
    ms = pick(handle_->jitter);
  }
  return std::chrono::milliseconds(std::max<long long>(ms, static_cast<long long>(asked_s * 1000)));
}

Json Transport::call(const std::string& method, const std::string& path, const std::optional<std::string>& body,
                     bool retry) {
  int tries = retry ? std::max(retry_.attempts, 1) : 1;
  std::string url = base_ + path;
  for (int attempt = 1;; attempt++) {
    std::string reply;
    double retry_after = -1;
    long status = 0;
    CURLcode rc;
    {
      std::lock_guard<std::mutex> g(handle_->lock);
      CURL* c = handle_->curl;
      curl_easy_reset(c);
      curl_slist* headers = nullptr;
      for (const auto& [k, v] : authorize_(method, url, body.value_or(""))) headers = curl_slist_append(headers, (k + ": " + v).c_str());
      if (body) headers = curl_slist_append(headers, "content-type: application/json");
      curl_easy_setopt(c, CURLOPT_URL, url.c_str());
      curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method.c_str());
      if (body) {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, body->data());
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, static_cast<long>(body->size()));
      } else if (method == "POST" || method == "PUT") {
        curl_easy_setopt(c, CURLOPT_POSTFIELDS, "");
        curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE, 0L);
      }
      curl_easy_setopt(c, CURLOPT_HTTPHEADER, headers);
      curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, collect);
      curl_easy_setopt(c, CURLOPT_WRITEDATA, &reply);
      curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, header_line);
      curl_easy_setopt(c, CURLOPT_HEADERDATA, &retry_after);
      curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, 30000L);
      curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
      rc = curl_easy_perform(c);
      curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
      curl_slist_free_all(headers);
    }
    if (rc != CURLE_OK) {
      if (attempt < tries) {
        std::this_thread::sleep_for(backoff(attempt, 0));
        continue;
      }
      throw Error(0, "network_error", curl_easy_strerror(rc));
    }
    if ((status == 429 || status == 503) && attempt < tries) {
      std::this_thread::sleep_for(backoff(attempt, retry_after));
      continue;
    }
    if (status >= 400) throw error_of(status, reply);
    return parse_exact(reply);
  }
}

}  // namespace leaderboard
