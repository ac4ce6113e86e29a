// A live view over the events API's WebSocket (AppSync Events' real-time protocol), on
// websocketpp: ws:// without TLS, wss:// with OpenSSL through Asio.
#include <atomic>
#include <condition_variable>
#include <mutex>
#include <random>
#include <thread>

#include <websocketpp/client.hpp>
#include <websocketpp/config/asio_client.hpp>

#include "transport.hpp"

namespace leaderboard {

struct LiveWatch::State {
  std::function<Json()> read;
  std::function<std::string()> token;
  std::function<void(const Json&)> on_update;
  std::string url;
  std::string host;

  mutable std::mutex gate;
  Json held;
  std::atomic<int> connections{0};
  bool stopping = false;
  std::condition_variable wake;
  std::function<void()> stop_session;  // closes the current connection, under `gate`
  std::thread thread;

  /// Holds `view` when it is newer than the held one, and tells the game.
  void hold(const Json& view) {
    {
      std::lock_guard<std::mutex> g(gate);
      if (!held.is_null() && view.value("version", 0LL) <= held.value("version", 0LL)) return;
      held = view;
    }
    on_update(view);
  }

  long long held_version() const {
    std::lock_guard<std::mutex> g(gate);
    return held.is_null() ? -1 : held.value("version", 0LL);
  }

  bool stopped() const {
    std::lock_guard<std::mutex> g(gate);
    return stopping;
  }

  void run();
  template <class Config>
  void session();
};

namespace {

std::string base64url(const std::string& in) {
  static const char* table = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  std::string out;
  size_t i = 0;
  for (; i + 2 < in.size(); i += 3) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8 | (unsigned char)in[i + 2];
    for (int s = 18; s >= 0; s -= 6) out += table[(v >> s) & 63];
  }
  if (i + 1 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16;
    out += table[(v >> 18) & 63];
    out += table[(v >> 12) & 63];
  } else if (i + 2 == in.size()) {
    unsigned v = (unsigned char)in[i] << 16 | (unsigned char)in[i + 1] << 8;
    for (int s = 18; s >= 6; s -= 6) out += table[(v >> s) & 63];
  }
  return out;
}

template <class Config>
void configure_tls(websocketpp::client<Config>&, const std::string&) {}

template <>
void configure_tls(websocketpp::client<websocketpp::config::asio_tls_client>& c, const std::string& host) {
  using context = websocketpp::lib::asio::ssl::context;
  c.set_tls_init_handler([host](websocketpp::connection_hdl) {
    auto ctx = websocketpp::lib::make_shared<context>(context::tls_client);
    ctx->set_default_verify_paths();
    ctx->set_verify_mode(websocketpp::lib::asio::ssl::verify_peer);
    ctx->set_verify_callback(websocketpp::lib::asio::ssl::rfc2818_verification(host));
    return ctx;
  });
}

}  // namespace

template <class Config>
void LiveWatch::State::session() {
  using Client = websocketpp::client<Config>;
  Client c;
  c.clear_access_channels(websocketpp::log::alevel::all);
  c.clear_error_channels(websocketpp::log::elevel::all);
  c.init_asio();
  std::string server_host = host.substr(0, host.find(':'));
  configure_tls(c, server_host);

  Json first = read();
  hold(first);
  const std::string channel = first.at("channel").get<std::string>();
  const Json auth = {{"host", host}, {"Authorization", token()}};

  websocketpp::lib::error_code ec;
  auto con = c.get_connection(url, ec);
  if (ec) throw std::runtime_error("events API: " + ec.message());
  con->add_subprotocol("aws-appsync-event-ws");
  con->add_subprotocol("header-" + base64url(auth.dump()));
  con->set_open_handler([&](websocketpp::connection_hdl h) {
    connections++;
    c.send(h, R"({"type":"connection_init"})", websocketpp::frame::opcode::text);
  });
  std::string failure;
  con->set_message_handler([&](websocketpp::connection_hdl h, typename Client::message_ptr msg) {
    try {
      Json m = Json::parse(msg->get_payload());
      std::string type = m.value("type", "");
      if (type == "connection_ack") {
        Json sub = {{"type", "subscribe"}, {"id", "view"}, {"channel", channel}, {"authorization", auth}};
        c.send(h, sub.dump(), websocketpp::frame::opcode::text);
      } else if (type == "subscribe_success") {
        hold(read());
      } else if (type == "data") {
        const Json& e = m["event"];
        Json push = e.is_string() ? parse_exact(e.get<std::string>()) : e;
        long long now = held_version();
        if (push.value("version", 0LL) <= now) return;
        if (push.value("previous", -2LL) == now) {
          hold(push);
        } else {
          hold(read());
        }
      } else if (type == "connection_error" || type == "subscribe_error" || type == "error") {
        failure = "events API: " + msg->get_payload();
        c.close(h, websocketpp::close::status::normal, "");
      }
    } catch (const std::exception& ex) {
      failure = ex.what();
      c.close(h, websocketpp::close::status::normal, "");
    }
  });
  c.connect(con);
  {
    std::lock_guard<std::mutex> g(gate);
    if (stopping) return;
    stop_session = [&c] { c.stop(); };
  }
  c.run();
  {
    std::lock_guard<std::mutex> g(gate);
    stop_session = nullptr;
  }
  if (!failure.empty()) throw std::runtime_error(failure);
}

void LiveWatch::State::run() {
  std::mt19937 jitter{std::random_device{}()};
  int failures = 0;
  while (!stopped()) {
    try {
      if (url.rfind("wss://", 0) == 0)
        session<websocketpp::config::asio_tls_client>();
      else
        session<websocketpp::config::asio_client>();
      failures = 0;
    } catch (const std::exception&) {
      // Reconnected below, after a backoff.
    }
    failures++;
    long long bound = std::min<long long>(10000, 200LL << std::min(failures, 10));
    std::unique_lock<std::mutex> g(gate);
    wake.wait_for(g, std::chrono::milliseconds(std::uniform_int_distribution<long long>(0, bound)(jitter)),
                  [this] { return stopping; });
  }
}

LiveWatch::LiveWatch(std::shared_ptr<State> state) : state_(std::move(state)) {}

LiveWatch::~LiveWatch() {
  {
    std::lock_guard<std::mutex> g(state_->gate);
    state_->stopping = true;
    if (state_->stop_session) state_->stop_session();
  }
  state_->wake.notify_all();
  if (state_->thread.joinable()) state_->thread.join();
}

Json LiveWatch::current() const {
  std::lock_guard<std::mutex> g(state_->gate);
  return state_->held;
}

int LiveWatch::connections() const { return state_->connections; }

std::unique_ptr<LiveWatch> PlayerClient::watch_top(const std::string& board, int n,
                                                   std::function<void(const Json&)> on_update,
                                                   const std::string& realtime_url, const std::string& host) {
  return watch([this, board, n] { return live_top(board, n); }, std::move(on_update), realtime_url, host);
}

std::unique_ptr<LiveWatch> PlayerClient::watch_me(const std::string& board, const std::string& player, int k,
                                                  std::function<void(const Json&)> on_update,
                                                  const std::string& realtime_url, const std::string& host) {
  return watch([this, board, player, k] { return live_me(board, player, k); }, std::move(on_update), realtime_url, host);
}

std::unique_ptr<LiveWatch> PlayerClient::watch(std::function<Json()> read, std::function<void(const Json&)> on_update,
                                               const std::string& realtime_url, const std::string& host) {
  auto state = std::make_shared<LiveWatch::State>();
  state->read = std::move(read);
  state->token = token_;
  state->on_update = std::move(on_update);
  state->url = realtime_url;
  if (host.empty()) {
    size_t start = realtime_url.find("://");
    start = start == std::string::npos ? 0 : start + 3;
    state->host = realtime_url.substr(start, realtime_url.find('/', start) - start);
  } else {
    state->host = host;
  }
  state->thread = std::thread([s = state.get()] { s->run(); });
  return std::unique_ptr<LiveWatch>(new LiveWatch(state));
}

}  // namespace leaderboard
