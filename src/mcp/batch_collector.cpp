#include "mcp/batch_collector.h"

#include <utility>

namespace talaria::mcp {

RoutedSink BatchCollector::Wrap(RoutedSink sink) {
  if (!sink) return sink;  // no sink, nothing to send (the Outlet checks for one)
  // Holds the collector (which holds nothing back): the Outlet may outlive the server.
  return [self = shared_from_this(), sink = std::move(sink)](std::string_view line,
                                                             const Routing& routing) {
    // Every response passes here; without an open batch it costs one atomic load.
    if (routing.is_response && !routing.outside_batch && !routing.request.empty() &&
        self->AnyOpen()) {
      std::optional<Flush> flush;
      {
        std::lock_guard lock(self->mu_);
        auto it = self->by_request_.find(routing.request);
        if (it != self->by_request_.end()) {
          std::shared_ptr<Batch> batch = it->second;
          self->by_request_.erase(it);
          self->open_requests_.store(self->by_request_.size(), std::memory_order_release);
          batch->responses.emplace_back(line);
          if (--batch->waiting == 0) flush = Complete(*batch);
          if (!flush) return;  // kept for the array
        }
      }
      if (flush) return sink(flush->line, Routing{flush->batch_key, true});
    }
    sink(line, routing);
  };
}

bool BatchCollector::IsOpen(std::string_view request_key) const {
  std::lock_guard lock(mu_);
  return by_request_.find(request_key) != by_request_.end();
}

std::optional<BatchCollector::Flush> BatchCollector::Open(std::string batch_key,
                                                          const std::vector<std::string>& requests,
                                                          std::vector<std::string> early) {
  auto batch = std::make_shared<Batch>();
  batch->key = std::move(batch_key);
  batch->responses = std::move(early);
  batch->waiting = requests.size();
  if (requests.empty()) return Complete(*batch);
  std::lock_guard lock(mu_);
  for (const std::string& key : requests) by_request_.emplace(key, batch);
  open_requests_.store(by_request_.size(), std::memory_order_release);
  return std::nullopt;
}

std::optional<BatchCollector::Flush> BatchCollector::Abandon(std::string_view key) {
  std::lock_guard lock(mu_);
  auto it = by_request_.find(key);
  if (it == by_request_.end()) return std::nullopt;
  std::shared_ptr<Batch> batch = it->second;
  by_request_.erase(it);
  open_requests_.store(by_request_.size(), std::memory_order_release);
  return --batch->waiting == 0 ? Complete(*batch) : std::nullopt;
}

std::optional<BatchCollector::Flush> BatchCollector::Complete(Batch& batch) {
  if (batch.responses.empty()) return std::nullopt;  // JSON-RPC: no empty array is sent
  std::string line = "[";
  for (size_t i = 0; i < batch.responses.size(); ++i) {
    if (i > 0) line += ',';
    line += batch.responses[i];
  }
  line += ']';
  return Flush{std::move(line), batch.key};
}

}  // namespace talaria::mcp
