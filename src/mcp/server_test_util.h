// Test helper for McpServer tests: collects what a server sends and waits for lines.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <mutex>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/mcp/server.h"

namespace talaria::mcp {

using namespace std::chrono_literals;

// Collects what the server sends; waits for lines with a deadline.
class Outbox {
 public:
  MessageSink Sink() {
    return [this](std::string_view line) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(line);
      cv_.notify_all();
    };
  }
  // Also records each message's routing as "<request>|<response?>" beside it.
  RoutedSink Routed() {
    return [this](std::string_view line, const Routing& routing) {
      std::lock_guard lock(mu_);
      lines_.emplace_back(line);
      routes_.push_back(std::string(routing.request) +
                        (routing.is_response ? "|response" : "|related"));
      cv_.notify_all();
    };
  }
  // The routing recorded for the first line containing `needle` (Routed() sinks only).
  std::string RouteOf(std::string_view needle) {
    std::lock_guard lock(mu_);
    for (size_t i = 0; i < lines_.size() && i < routes_.size(); ++i) {
      if (lines_[i].find(needle) != std::string::npos) return routes_[i];
    }
    return {};
  }
  // The first message matching `pred`, or null after `timeout`.
  Json WaitFor(const std::function<bool(const Json&)>& pred,
               std::chrono::milliseconds timeout = 3s) {
    std::unique_lock lock(mu_);
    Json found;
    cv_.wait_for(lock, timeout, [&] {
      for (const auto& l : lines_) {
        Json j = Json::parse(l);
        if (pred(j)) {
          found = std::move(j);
          return true;
        }
      }
      return false;
    });
    return found;
  }
  Json Response(const Json& id, std::chrono::milliseconds timeout = 3s) {
    return WaitFor(
        [&](const Json& j) { return j.contains("id") && j["id"] == id && !j.contains("method"); },
        timeout);
  }
  std::vector<Json> Notifications(std::string_view method) {
    std::lock_guard lock(mu_);
    std::vector<Json> out;
    for (const auto& l : lines_) {
      Json j = Json::parse(l);
      if (j.value("method", "") == method) out.push_back(std::move(j));
    }
    return out;
  }
  std::vector<std::string> Lines() {
    std::lock_guard lock(mu_);
    return lines_;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> lines_;   // Guarded by mu_.
  std::vector<std::string> routes_;  // Guarded by mu_.
};

}  // namespace talaria::mcp
