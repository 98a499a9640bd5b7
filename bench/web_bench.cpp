// talaria_web_bench: the network guard's decision cost and the fetcher's overhead (issue 22).
//   METRIC web_guard_check_us <v> us     per URL, Check without resolution (median of 5 passes
//                                        over 3,000 URLs: public and private literals in many
//                                        spellings, names, metadata, user info, secrets)
//   METRIC web_fetch_bare_us <v> us      one GET of a 10 KB page from 127.0.0.1 with a reused
//                                        libcurl easy handle (keep-alive), median per request
//   METRIC web_fetch_netclient_us <v> us the same through net::HttpClient alone
//   METRIC web_fetch_talaria_us <v> us   the same through Fetcher::Fetch (guard, pin, pool)
//   METRIC web_fetch_overhead_ratio <v> x  talaria over bare (goal <= 1.2)
#include <arpa/inet.h>
#include <curl/curl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench_util.h"
#include "talaria/web/fetcher.h"
#include "talaria/web/network_guard.h"

namespace {

using Clock = std::chrono::steady_clock;
using talaria_bench::Median;
using talaria_bench::PrintMetric;

std::vector<std::string> GuardCorpus() {
  const std::vector<std::string> hosts = {"example.org",
                                          "docs.python.org",
                                          "93.184.216.34",
                                          "127.0.0.1",
                                          "2130706433",
                                          "0x7f.1",
                                          "0177.0.0.1",
                                          "10.0.0.8",
                                          "[::1]",
                                          "[::ffff:127.0.0.1]",
                                          "[64:ff9b::a00:1]",
                                          "[2002:c0a8:101::1]",
                                          "169.254.169.254",
                                          "metadata.google.internal",
                                          "localhost",
                                          "[2606:4700::1111]",
                                          "user@example.org",
                                          "192.168.1.20:8080",
                                          "8.8.8.8",
                                          "news.ycombinator.com"};
  const std::vector<std::string> paths = {"/", "/wiki/Main_Page?action=view", "/a/b/c.html#x",
                                          "/search?q=sk-proj-abcdefghijklmnopqrstuvwxyz012345"};
  std::vector<std::string> out;
  talaria_bench::SplitMix64 rng(22);
  for (int i = 0; i < 3000; ++i) {
    out.push_back((rng.Below(4) == 0 ? "http://" : "https://") + hosts[rng.Below(hosts.size())] +
                  paths[rng.Below(paths.size())]);
  }
  return out;
}

void BenchGuard() {
  auto guard = talaria::web::NetworkGuard::Create({});
  const std::vector<std::string> corpus = GuardCorpus();
  std::vector<double> per_url;
  size_t refused = 0;
  for (int pass = 0; pass < 6; ++pass) {
    refused = 0;
    const auto t0 = Clock::now();
    for (const std::string& url : corpus) refused += (*guard)->Check(url).has_value() ? 0 : 1;
    const double us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (pass > 0) per_url.push_back(us / static_cast<double>(corpus.size()));
  }
  PrintMetric("web_guard_check_us", Median(per_url), "us");
  PrintMetric("web_guard_refused_share", static_cast<double>(refused) / corpus.size(), "ratio");
}

// A minimal HTTP/1.1 server on 127.0.0.1: a thread per connection, each request (a head, no
// body) answered with the same bytes, connections kept alive. cpp-httplib's worker pool made one
// of three kept-alive clients wait milliseconds per request; this measures the clients alone.
class KeepAliveServer {
 public:
  explicit KeepAliveServer(std::string reply) : reply_(std::move(reply)) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    socklen_t len = sizeof(addr);
    ::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof(addr));
    ::listen(fd_, 16);
    ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
    port_ = ntohs(addr.sin_port);
    accept_ = std::thread([this] {
      while (true) {
        const int conn = ::accept4(fd_, nullptr, nullptr, SOCK_CLOEXEC);
        if (conn < 0) return;
        const int one = 1;
        ::setsockopt(conn, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        std::lock_guard lock(mu_);
        conns_.push_back(conn);
        workers_.emplace_back([this, conn] { Serve(conn); });
      }
    });
  }
  KeepAliveServer(const KeepAliveServer&) = delete;
  KeepAliveServer& operator=(const KeepAliveServer&) = delete;
  ~KeepAliveServer() {
    ::shutdown(fd_, SHUT_RDWR);
    accept_.join();
    {
      std::lock_guard lock(mu_);
      for (int c : conns_) ::shutdown(c, SHUT_RDWR);
    }
    for (auto& w : workers_) w.join();
    for (int c : conns_) ::close(c);
    ::close(fd_);
  }
  std::string url() const { return "http://127.0.0.1:" + std::to_string(port_) + "/page"; }
  int port() const { return port_; }

 private:
  void Serve(int conn) {
    std::string in;
    char buf[4096];
    while (true) {
      const ssize_t n = ::read(conn, buf, sizeof(buf));
      if (n <= 0) return;
      in.append(buf, static_cast<size_t>(n));
      size_t end;
      while ((end = in.find("\r\n\r\n")) != std::string::npos) {
        in.erase(0, end + 4);
        size_t sent = 0;
        while (sent < reply_.size()) {
          const ssize_t w = ::send(conn, reply_.data() + sent, reply_.size() - sent, MSG_NOSIGNAL);
          if (w <= 0) return;
          sent += static_cast<size_t>(w);
        }
      }
    }
  }
  std::string reply_;
  int fd_ = -1;
  int port_ = 0;
  std::thread accept_;
  std::mutex mu_;
  std::vector<int> conns_;
  std::vector<std::thread> workers_;
};

size_t Discard(char*, size_t size, size_t n, void* out) {
  *static_cast<size_t*>(out) += size * n;
  return size * n;
}

void BenchFetch() {
  const std::string page(10 * 1024, 'x');
  KeepAliveServer server("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: " +
                         std::to_string(page.size()) + "\r\n\r\n" + page);
  const std::string url = server.url();
  constexpr int kRequests = 400;

  curl_global_init(CURL_GLOBAL_DEFAULT);
  CURL* easy = curl_easy_init();
  size_t got = 0;
  curl_easy_setopt(easy, CURLOPT_URL, url.c_str());
  curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, &Discard);
  curl_easy_setopt(easy, CURLOPT_WRITEDATA, &got);
  curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
  auto client = talaria::net::MakeHttpClient();
  auto guard = talaria::web::NetworkGuard::Create(
      {.allow_private = {"127.0.0.1:" + std::to_string(server.port())}, .resolver = nullptr});
  auto fetcher = talaria::web::Fetcher::Create(*guard);
  if (!fetcher.has_value() || !client.has_value()) {
    std::fprintf(stderr, "fetcher or client failed to start\n");
    return;
  }
  // Interleaved, so that the load of a shared machine weighs on all three alike.
  std::vector<double> bare;
  std::vector<double> net_only;
  std::vector<double> ours;
  for (int i = 0; i < kRequests + 20; ++i) {
    auto t0 = Clock::now();
    curl_easy_perform(easy);
    const double b_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();

    talaria::net::HttpRequest req;
    req.url = url;
    req.decompress = true;
    std::string body;
    t0 = Clock::now();
    auto sent = (*client)->Send(req, [&](std::string_view c) {
      body.append(c);
      return true;
    });
    const double n_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();

    t0 = Clock::now();
    auto r = (*fetcher)->Fetch(url);
    const double t_us = std::chrono::duration<double, std::micro>(Clock::now() - t0).count();
    if (!r.has_value() || r->body.size() != page.size() || !sent.has_value()) {
      std::fprintf(stderr, "fetch failed\n");
      return;
    }
    if (i >= 20) {
      bare.push_back(b_us);
      net_only.push_back(n_us);
      ours.push_back(t_us);
    }
  }
  curl_easy_cleanup(easy);
  PrintMetric("web_fetch_netclient_us", Median(net_only), "us");
  const double b = Median(bare);
  const double t = Median(ours);
  PrintMetric("web_fetch_bare_us", b, "us");
  PrintMetric("web_fetch_talaria_us", t, "us");
  PrintMetric("web_fetch_overhead_ratio", t / b, "x");
}

}  // namespace

int main() {
  BenchGuard();
  BenchFetch();
  return 0;
}
