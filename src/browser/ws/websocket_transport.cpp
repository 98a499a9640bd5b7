// The CDP transport over a WebSocket (ws:// and wss://): Boost.Beast on one io thread per
// connection. The only file that sees Beast or Asio; built into libtalaria_browser_ws.so
// (ws_module.h).
//
// Why one io thread: a Beast stream is not thread-safe, and CdpTransport lets any thread Send
// while one reader blocks in Receive. So the stream is touched only on its io thread: Send
// queues the message and posts the write, the io thread keeps one read pending at all times
// and queues whole messages for Receive, and Close posts the socket's close. Messages are read
// even when nobody calls Receive (CDP events keep coming); a reader that falls that far behind
// (kMaxInboxBytes) ends the connection instead of buffering without bound.
#include <openssl/ssl.h>

#include <boost/asio/connect.hpp>
#include <boost/asio/io_context.hpp>
#include <boost/asio/ip/tcp.hpp>
#include <boost/asio/post.hpp>
#include <boost/asio/ssl.hpp>
#include <boost/asio/steady_timer.hpp>
#include <boost/beast/core.hpp>
#include <boost/beast/http.hpp>
#include <boost/beast/ssl.hpp>
#include <boost/beast/websocket.hpp>
#include <boost/beast/websocket/ssl.hpp>
#include <condition_variable>
#include <deque>
#include <exception>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>

#include "browser/websocket_proxy.h"
#include "browser/ws_module.h"
#include "talaria/base/ascii.h"
#include "talaria/browser/cdp_transport.h"

namespace talaria::browser {
namespace {

namespace asio = boost::asio;
namespace beast = boost::beast;
namespace websocket = beast::websocket;
namespace http = beast::http;
using tcp = asio::ip::tcp;
using ErrorCode = boost::system::error_code;

// Received messages waiting for Receive, in bytes, before the connection is given up.
constexpr size_t kMaxInboxBytes = size_t{256} << 20;
// Messages waiting to be written, in bytes, before Send refuses more.
constexpr size_t kMaxOutboxBytes = size_t{64} << 20;

struct WsUrl {
  bool tls = false;
  std::string host;  // no brackets
  std::string port;  // explicit or the scheme's default
  std::string host_header;
  std::string target;  // path and query, "/" at least
};

bool HasControlOrSpace(std::string_view s) {
  for (const char c : s) {
    if (static_cast<unsigned char>(c) <= 0x20 || c == 0x7f) return true;
  }
  return false;
}

Result<WsUrl> ParseWsUrl(std::string_view url) {
  WsUrl out;
  const size_t scheme_end = url.find("://");
  const std::string_view scheme = url.substr(0, scheme_end);
  out.tls = EqualsIgnoringAsciiCase(scheme, "wss");
  url.remove_prefix(scheme_end + 3);
  const size_t path_start = url.find_first_of("/?#");
  std::string_view authority = url.substr(0, path_start);
  std::string_view rest = path_start == std::string_view::npos ? "" : url.substr(path_start);
  if (const size_t hash = rest.find('#'); hash != std::string_view::npos) {
    rest = rest.substr(0, hash);
  }
  if (authority.empty() || authority.find('@') != std::string_view::npos ||
      HasControlOrSpace(authority) || HasControlOrSpace(rest)) {
    return Err(InvalidArgumentError("CDP WebSocket URL has a bad authority or path"));
  }
  std::string_view host = authority;
  std::string_view port;
  if (authority.front() == '[') {
    const size_t close = authority.find(']');
    if (close == std::string_view::npos) {
      return Err(InvalidArgumentError("CDP WebSocket URL has an unclosed IPv6 bracket"));
    }
    host = authority.substr(1, close - 1);
    std::string_view after = authority.substr(close + 1);
    if (!after.empty()) {
      if (after.front() != ':') return Err(InvalidArgumentError("CDP WebSocket URL: bad port"));
      port = after.substr(1);
    }
  } else if (const size_t colon = authority.rfind(':'); colon != std::string_view::npos) {
    host = authority.substr(0, colon);
    port = authority.substr(colon + 1);
  }
  if (host.empty()) return Err(InvalidArgumentError("CDP WebSocket URL has no host"));
  if (!port.empty()) {
    if (port.size() > 5 || port.find_first_not_of("0123456789") != std::string_view::npos ||
        std::stoi(std::string(port)) == 0 || std::stoi(std::string(port)) > 65535) {
      return Err(InvalidArgumentError("CDP WebSocket URL has a bad port"));
    }
  }
  out.host = std::string(host);
  out.port = port.empty() ? (out.tls ? "443" : "80") : std::string(port);
  out.host_header = std::string(authority);
  out.target = rest.empty() ? "/" : std::string(rest);
  if (out.target.front() == '?') out.target.insert(0, "/");
  return out;
}

Status CheckHeaders(const WebSocketOptions& options) {
  for (const auto& [name, value] : options.headers) {
    const bool bad_name = name.empty() || HasControlOrSpace(name) || name.find(':') != name.npos;
    const bool bad_value = value.find_first_of(std::string_view("\r\n\0", 3)) != value.npos;
    if (bad_name || bad_value) {
      return InvalidArgumentError("CDP WebSocket header '" + name.substr(0, 40) +
                                  "' has a bad name or value");
    }
  }
  return Status::Ok();
}

std::string Describe(const ErrorCode& ec) {
  if (ec == websocket::error::message_too_big) return "the peer sent a message over the limit";
  if (ec == websocket::error::closed) return "the peer closed the WebSocket";
  if (ec == asio::error::eof || ec == beast::http::error::end_of_stream) {
    return "the peer closed the connection";
  }
  return ec.message();
}

template <bool kTls>
struct StreamFor {
  using type = websocket::stream<beast::tcp_stream>;
};
template <>
struct StreamFor<true> {
  using type = websocket::stream<beast::ssl_stream<beast::tcp_stream>>;
};

template <bool kTls>
class BeastTransport final : public CdpTransport {
 public:
  using Stream = typename StreamFor<kTls>::type;

  BeastTransport() : ctx_(asio::ssl::context::tls_client), ws_(MakeStream()) {}

  ~BeastTransport() override {
    Close();
    if (io_thread_.joinable()) {
      ioc_.stop();
      io_thread_.join();
    }
  }

  BeastTransport(const BeastTransport&) = delete;
  BeastTransport& operator=(const BeastTransport&) = delete;

  // Runs the whole handshake (resolve, connect, through the environment's proxy a CONNECT
  // tunnel, TLS, upgrade) on the caller's thread under one deadline, then starts the io thread.
  Status Connect(const WsUrl& url, const WebSocketOptions& options) {
    auto proxy_choice = WebSocketProxyFor(url.tls, url.host);
    if (!proxy_choice) {
      return proxy_choice.error().WithContext("CDP WebSocket to " + url.host_header);
    }
    const std::optional<WebSocketProxy>& proxy = *proxy_choice;
    Status result = InternalError("CDP WebSocket handshake did not finish");
    bool timed_out = false;
    tcp::resolver resolver(ioc_);
    asio::steady_timer timer(ioc_);
    websocket::response_type upgrade_answer;
    const std::string where = url.host_header;

    auto finish = [&](Status s) {
      result = std::move(s);
      timer.cancel();
    };
    auto failed = [&](const std::string& step, const ErrorCode& ec) {
      if (timed_out) {
        finish(DeadlineExceededError("CDP WebSocket to " + where + ": no connection within " +
                                     std::to_string(options.connect_timeout.count()) + " ms"));
      } else {
        finish(UnavailableError("CDP WebSocket to " + where + ": " + std::string(step) +
                                " failed: " + Describe(ec)));
      }
    };

    timer.expires_after(options.connect_timeout);
    timer.async_wait([&](const ErrorCode& ec) {
      if (ec) return;  // cancelled: the handshake finished first
      timed_out = true;
      resolver.cancel();
      ErrorCode ignored;
      beast::get_lowest_layer(ws_).socket().close(ignored);
    });

    ws_.read_message_max(options.max_message_bytes);
    ws_.auto_fragment(false);
    // The decorator outlives this call inside the stream: it keeps its own copy of the headers.
    ws_.set_option(websocket::stream_base::decorator(
        [headers = options.headers](websocket::request_type& req) {
          req.set(http::field::user_agent, "talaria-cdp/1.0");
          for (const auto& [name, value] : headers) req.set(name, value);
        }));

    // Through a proxy: CONNECT host:port, and a 200 before anything else crosses.
    const bool v6 = url.host.find(':') != std::string::npos;
    const std::string tunnel_target = (v6 ? "[" + url.host + "]" : url.host) + ":" + url.port;
    http::request<http::empty_body> tunnel_request{http::verb::connect, tunnel_target, 11};
    http::response_parser<http::empty_body> tunnel_answer;
    beast::flat_buffer tunnel_buffer;
    auto through_tunnel = [&](auto&& next) {
      tunnel_request.set(http::field::host, tunnel_target);
      tunnel_request.set(http::field::user_agent, "talaria-cdp/1.0");
      if (!proxy->authorization.empty()) {
        tunnel_request.set(http::field::proxy_authorization, proxy->authorization);
      }
      http::async_write(
          beast::get_lowest_layer(ws_), tunnel_request, [&, next](const ErrorCode& ec, size_t) {
            if (ec) return failed("asking proxy " + proxy->where + " for a tunnel", ec);
            tunnel_answer.skip(true);  // an answer to CONNECT has no body
            http::async_read(beast::get_lowest_layer(ws_), tunnel_buffer, tunnel_answer,
                             [&, next](const ErrorCode& rec, size_t) {
                               if (rec)
                                 return failed("reading proxy " + proxy->where + "'s answer", rec);
                               const unsigned status = tunnel_answer.get().result_int();
                               if (status / 100 != 2) {
                                 return finish(UnavailableError(
                                     "CDP WebSocket to " + where + ": proxy " + proxy->where +
                                     " refused the tunnel (HTTP " + std::to_string(status) + ")"));
                               }
                               if (tunnel_buffer.size() != 0) {
                                 return finish(UnavailableError(
                                     "CDP WebSocket to " + where + ": proxy " + proxy->where +
                                     " sent bytes before the tunnel opened"));
                               }
                               next();
                             });
          });
    };

    auto upgrade = [&] {
      ws_.async_handshake(upgrade_answer, url.host_header, url.target, [&](const ErrorCode& ec) {
        if (!ec) return finish(Status::Ok());
        if (ec == websocket::error::upgrade_declined && upgrade_answer.result_int() != 0) {
          return finish(UnavailableError("CDP WebSocket to " + where +
                                         ": upgrade refused with HTTP " +
                                         std::to_string(upgrade_answer.result_int())));
        }
        failed("upgrade", ec);
      });
    };

    auto secure_then_upgrade = [&, upgrade] {
      if constexpr (kTls) {
        StartTls(url, [&, upgrade](const ErrorCode& tec) {
          if (tec) return failed("TLS handshake", tec);
          upgrade();
        });
      } else {
        upgrade();
      }
    };
    const std::string& dial_host = proxy ? proxy->host : url.host;
    const std::string& dial_port = proxy ? proxy->port : url.port;
    resolver.async_resolve(
        dial_host, dial_port, [&](const ErrorCode& ec, const tcp::resolver::results_type& found) {
          if (ec)
            return failed(proxy ? "resolving proxy " + proxy->where : "resolving the host", ec);
          asio::async_connect(
              beast::get_lowest_layer(ws_).socket(), found,
              [&](const ErrorCode& cec, const tcp::endpoint&) {
                if (cec)
                  return failed(proxy ? "connecting to proxy " + proxy->where : "connecting", cec);
                ErrorCode ignored;
                beast::get_lowest_layer(ws_).socket().set_option(tcp::no_delay(true), ignored);
                if (proxy) return through_tunnel(secure_then_upgrade);
                secure_then_upgrade();
              });
        });
    ioc_.run();
    ioc_.restart();
    if (!result.ok()) return result;

    io_thread_ = std::thread([this] { RunIo(); });
    return Status::Ok();
  }

  Status Send(std::string_view message) override {
    std::lock_guard lock(mu_);
    if (closed_) return UnavailableError(reason_);
    if (outbox_bytes_ + message.size() > kMaxOutboxBytes) {
      return ResourceExhaustedError("CDP WebSocket: the peer is not reading (" +
                                    std::to_string(outbox_bytes_) + " bytes queued)");
    }
    outbox_.emplace_back(message);
    outbox_bytes_ += message.size();
    if (!writing_) {
      writing_ = true;
      asio::post(ioc_, [this] { WriteFront(); });
    }
    return Status::Ok();
  }

  Result<std::string> Receive(std::chrono::steady_clock::time_point deadline,
                              std::stop_token cancel) override {
    std::unique_lock lock(mu_);
    cv_.wait_until(lock, cancel, deadline, [this] { return !inbox_.empty() || closed_; });
    // Messages that arrived before the end are still handed out.
    if (!inbox_.empty()) {
      std::string message = std::move(inbox_.front());
      inbox_.pop_front();
      inbox_bytes_ -= message.size();
      return message;
    }
    if (closed_) return Err(UnavailableError(reason_));
    if (cancel.stop_requested()) return Err(CancelledError("CDP receive cancelled"));
    return Err(DeadlineExceededError("CDP receive: no message before the deadline"));
  }

  void Close() override {
    {
      std::lock_guard lock(mu_);
      if (closed_) return;
      closed_ = true;
      reason_ = "CDP WebSocket closed";
    }
    cv_.notify_all();
    // The socket belongs to the io thread; closing it there aborts the pending read.
    asio::post(ioc_, [this] {
      ErrorCode ignored;
      beast::get_lowest_layer(ws_).socket().shutdown(tcp::socket::shutdown_both, ignored);
      beast::get_lowest_layer(ws_).socket().close(ignored);
    });
  }

 private:
  Stream MakeStream() {
    if constexpr (kTls) {
      return Stream(ioc_, ctx_);
    } else {
      return Stream(ioc_);
    }
  }

  template <class Handler>
  void StartTls(const WsUrl& url, Handler&& on_done) {
    ErrorCode ec;
    ctx_.set_default_verify_paths(ec);  // honours SSL_CERT_FILE and SSL_CERT_DIR
    auto& ssl = ws_.next_layer();
    // On the stream, not the context: the stream's SSL object copied the context's mode when it
    // was made, so setting it there now would verify nothing.
    ssl.set_verify_mode(asio::ssl::verify_peer);
    ssl.set_verify_callback(asio::ssl::host_name_verification(url.host));
    // SNI, for a host name only (RFC 6066 forbids an address there).
    ErrorCode not_ip;
    asio::ip::make_address(url.host, not_ip);
    if (not_ip) SSL_set_tlsext_host_name(ssl.native_handle(), url.host.c_str());
    ssl.async_handshake(asio::ssl::stream_base::client, std::forward<Handler>(on_done));
  }

  void RunIo() {
    try {
      ReadNext();
      ioc_.run();
    } catch (const std::exception& e) {
      Fail(std::string("CDP WebSocket failed: ") + e.what());
    }
  }

  void ReadNext() {
    ws_.async_read(in_buffer_, [this](const ErrorCode& ec, size_t) {
      if (ec) return Fail("CDP WebSocket: " + Describe(ec));
      std::string message = beast::buffers_to_string(in_buffer_.data());
      in_buffer_.consume(in_buffer_.size());
      {
        std::lock_guard lock(mu_);
        if (closed_) return;
        inbox_bytes_ += message.size();
        inbox_.push_back(std::move(message));
      }
      cv_.notify_all();
      if (InboxOverflowing()) {
        return Fail("CDP WebSocket: more than " + std::to_string(kMaxInboxBytes) +
                    " bytes received and not read");
      }
      ReadNext();
    });
  }

  bool InboxOverflowing() {
    std::lock_guard lock(mu_);
    return inbox_bytes_ > kMaxInboxBytes;
  }

  // On the io thread.
  void WriteFront() {
    const std::string* front = nullptr;
    {
      std::lock_guard lock(mu_);
      if (closed_ || outbox_.empty()) {
        writing_ = false;
        return;
      }
      front = &outbox_.front();  // deque: stays put while later messages are appended
    }
    ws_.text(true);
    ws_.async_write(asio::buffer(*front), [this](const ErrorCode& ec, size_t) {
      if (ec) return Fail("CDP WebSocket: sending failed: " + Describe(ec));
      {
        std::lock_guard lock(mu_);
        outbox_bytes_ -= outbox_.front().size();
        outbox_.pop_front();
      }
      WriteFront();
    });
  }

  // On the io thread: the connection is over; tell Receive why and release the socket.
  void Fail(std::string why) {
    {
      std::lock_guard lock(mu_);
      if (!closed_) {
        closed_ = true;
        reason_ = std::move(why);
      }
    }
    cv_.notify_all();
    ErrorCode ignored;
    beast::get_lowest_layer(ws_).socket().close(ignored);
  }

  asio::io_context ioc_;
  asio::ssl::context ctx_;
  Stream ws_;  // touched only by the io thread once Connect returned
  beast::flat_buffer in_buffer_;
  std::thread io_thread_;

  std::mutex mu_;
  std::condition_variable_any cv_;
  bool closed_ = false;             // Guarded by mu_.
  std::string reason_;              // Guarded by mu_.
  std::deque<std::string> inbox_;   // Guarded by mu_.
  size_t inbox_bytes_ = 0;          // Guarded by mu_.
  std::deque<std::string> outbox_;  // Guarded by mu_.
  size_t outbox_bytes_ = 0;         // Guarded by mu_.
  bool writing_ = false;            // Guarded by mu_.
};

template <bool kTls>
Result<std::unique_ptr<CdpTransport>> ConnectAs(const WsUrl& url, const WebSocketOptions& options) {
  auto transport = std::make_unique<BeastTransport<kTls>>();
  TALARIA_RETURN_IF_ERROR(transport->Connect(url, options));
  return std::unique_ptr<CdpTransport>(std::move(transport));
}

}  // namespace

namespace ws_internal {

Result<std::unique_ptr<CdpTransport>> ConnectBeastWebSocket(const WebSocketOptions& options) {
  const WsUrl url = TALARIA_TRY(ParseWsUrl(options.url));
  TALARIA_RETURN_IF_ERROR(CheckHeaders(options));
  // Beast and Asio report through error codes here; what still throws is an allocation or an
  // option they refuse, which must not cross into libtalaria.
  try {
    return url.tls ? ConnectAs<true>(url, options) : ConnectAs<false>(url, options);
  } catch (const std::exception& e) {
    return Err(UnavailableError(std::string("CDP WebSocket: ") + e.what()));
  }
}

const WsModule kModule{
    .abi = kModuleAbi, .table_size = sizeof(WsModule), .connect = &ConnectBeastWebSocket};

}  // namespace ws_internal
}  // namespace talaria::browser

extern "C" __attribute__((visibility("default"))) const talaria::browser::ws_internal::WsModule*
talaria_browser_ws_module() {
  return &talaria::browser::ws_internal::kModule;
}
