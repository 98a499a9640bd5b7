// SystemResolver (network_guard.h): getaddrinfo on a thread of its own, so a caller's stop
// request or the 10 s bound is honoured even while a DNS server does not answer (getaddrinfo
// itself cannot be interrupted; the thread finishes on its own and is forgotten).
#include <netdb.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include <chrono>
#include <condition_variable>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "talaria/web/network_guard.h"

namespace talaria::web {
namespace {

struct Lookup {
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;
  int rc = 0;
  std::vector<IpAddress> addresses;
};

class GetaddrinfoResolver final : public Resolver {
 public:
  Result<std::vector<IpAddress>> Resolve(const std::string& host,
                                         const std::stop_token& stop) override {
    auto lookup = std::make_shared<Lookup>();
    std::thread([lookup, host] {
      addrinfo hints{};
      hints.ai_family = AF_UNSPEC;
      hints.ai_socktype = SOCK_STREAM;
      addrinfo* res = nullptr;
      const int rc = getaddrinfo(host.c_str(), nullptr, &hints, &res);
      std::vector<IpAddress> out;
      for (addrinfo* p = rc == 0 ? res : nullptr; p != nullptr; p = p->ai_next) {
        IpAddress a;
        if (p->ai_family == AF_INET) {
          const auto* in = reinterpret_cast<const sockaddr_in*>(p->ai_addr);
          std::memcpy(a.bytes.data(), &in->sin_addr, 4);
        } else if (p->ai_family == AF_INET6) {
          const auto* in6 = reinterpret_cast<const sockaddr_in6*>(p->ai_addr);
          a.v6 = true;
          std::memcpy(a.bytes.data(), &in6->sin6_addr, 16);
        } else {
          continue;
        }
        bool seen = false;
        for (const IpAddress& b : out) seen |= b == a;
        if (!seen) out.push_back(a);
      }
      if (res != nullptr) freeaddrinfo(res);
      std::lock_guard lock(lookup->mu);
      lookup->rc = rc;
      lookup->addresses = std::move(out);
      lookup->done = true;
      lookup->cv.notify_all();
    }).detach();
    std::unique_lock lock(lookup->mu);
    const auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(10);
    while (!lookup->done) {
      if (stop.stop_requested()) return Err(CancelledError("resolving " + host + ": cancelled"));
      if (std::chrono::steady_clock::now() >= give_up) {
        return Err(UnavailableError("resolving " + host + ": no answer within 10 s"));
      }
      lookup->cv.wait_for(lock, std::chrono::milliseconds(50));
    }
    if (lookup->rc != 0) {
      return Err(UnavailableError("cannot resolve " + host + ": " + gai_strerror(lookup->rc)));
    }
    return std::move(lookup->addresses);
  }
};

}  // namespace

std::shared_ptr<Resolver> SystemResolver() {
  static const std::shared_ptr<Resolver> kResolver = std::make_shared<GetaddrinfoResolver>();
  return kResolver;
}

}  // namespace talaria::web
