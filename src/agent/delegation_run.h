// The Delegator's inside, shared by its files: a task as the call asked for it, one running
// child, and the small readers they share (delegation.cpp, delegation_child.cpp).
#pragma once

#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <mutex>
#include <set>
#include <stop_token>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "agent/delegation.h"
#include "talaria/base/json.h"

namespace talaria::agent {

using Clock = std::chrono::steady_clock;

inline double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

inline double Rounded(double seconds) {
  return static_cast<double>(std::llround(seconds * 1000.0)) / 1000.0;
}

inline std::string StringField(const Json& object, std::string_view key) {
  auto it = object.find(key);
  return it != object.end() && it->is_string() ? it->get<std::string>() : std::string();
}

struct Delegator::Task {
  size_t index = 0;
  std::string id;  // sa-<index>-<hex>
  std::string goal;
  std::string context;
  std::vector<std::string> toolsets;
  bool orchestrator = false;
  bool background = false;
  std::set<std::string> parent_reads;  // files the parent had read, absolute
};

struct Delegator::ChildRun {
  Task task;
  std::stop_source stop;
  std::atomic<bool> timed_out{false};
  std::mutex mu;
  std::condition_variable cv;
  bool done = false;  // Guarded by mu.
  Json entry;         // Guarded by mu; set when done.
  std::thread thread;
  Clock::time_point started;
};

}  // namespace talaria::agent
