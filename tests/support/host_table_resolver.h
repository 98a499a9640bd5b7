// A web::Resolver whose answers the test sets per host name, for the names tests make up: each
// lookup takes the host's next answer and the last one stays for good (a rebinding DNS server:
// public for the guard's check, loopback after); an unknown name is Unavailable ("no such
// host"). Header-only; include it from test files only. Thread-safe.
#pragma once

#include <map>
#include <mutex>
#include <stop_token>
#include <string>
#include <utility>
#include <vector>

#include "talaria/web/network_guard.h"

namespace talaria::test_support {

class HostTableResolver final : public web::Resolver {
 public:
  // `answers`: IP literals, used in turn.
  void Set(const std::string& host, std::vector<std::string> answers) {
    std::lock_guard lock(mu_);
    answers_[host] = std::move(answers);
  }
  Result<std::vector<web::IpAddress>> Resolve(const std::string& host,
                                              const std::stop_token&) override {
    std::lock_guard lock(mu_);
    auto it = answers_.find(host);
    if (it == answers_.end() || it->second.empty()) return Err(UnavailableError("no such host"));
    std::string answer = it->second.front();
    if (it->second.size() > 1) it->second.erase(it->second.begin());
    return std::vector<web::IpAddress>{*web::ParseIpLiteral(answer)};
  }

 private:
  std::mutex mu_;
  std::map<std::string, std::vector<std::string>> answers_;  // Guarded by mu_.
};

}  // namespace talaria::test_support
