// BatchCollector: gathers the responses to the requests of a JSON-RPC batch (allowed only under
// protocol 2025-03-26) and sends them out as one JSON array once the last one is in. It sits
// between an McpServer's Outlet and the transport's sink: a response routed to a request of an
// open batch is kept; everything else passes through untouched.
//
// The array goes out routed as the response to the batch's own key, so a transport that waits
// for an answer to the whole batch (Streamable HTTP's POST) finds it like any response.
// Thread-safety: thread-safe. The wrapped sink is called only from the returned sink, which the
// Outlet never calls concurrently with itself.
#pragma once

#include <atomic>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/mcp/server.h"

namespace talaria::mcp {

class BatchCollector : public std::enable_shared_from_this<BatchCollector> {
 public:
  // A message the caller must send itself (through its Outlet): a batch completed outside the
  // sink's path.
  struct Flush {
    std::string line;
    std::string batch_key;
  };

  // The sink to give the Outlet: captures responses to open batches, passes the rest to `sink`.
  RoutedSink Wrap(RoutedSink sink);

  // Whether a response routed to `request_key` would be taken by an open batch.
  bool IsOpen(std::string_view request_key) const;
  // Whether any batch waits on a request (one atomic load).
  bool AnyOpen() const { return open_requests_.load(std::memory_order_acquire) > 0; }

  // Opens a batch answered as the response to `batch_key` once each of `requests` (distinct
  // request keys, none open already) is answered; `early` holds answers known already (errors
  // of elements that were no valid message). With no requests it is complete at once: the
  // returned Flush carries the array (nullopt when `early` is empty too: nothing to answer).
  std::optional<Flush> Open(std::string batch_key, const std::vector<std::string>& requests,
                            std::vector<std::string> early);

  // The request `key` will get no answer (its call was cancelled by the client): its place is
  // dropped. The Flush when that completes its batch.
  std::optional<Flush> Abandon(std::string_view key);

 private:
  struct Batch {
    std::string key;
    size_t waiting = 0;                  // requests not answered yet
    std::vector<std::string> responses;  // in the order they came
  };

  // The array for a batch whose last answer is in; nullopt when it holds no answer at all.
  static std::optional<Flush> Complete(Batch& batch);

  mutable std::mutex mu_;
  std::map<std::string, std::shared_ptr<Batch>, std::less<>> by_request_;  // Guarded by mu_.
  std::atomic<size_t> open_requests_{0};  // by_request_.size(), written under mu_
};

}  // namespace talaria::mcp
