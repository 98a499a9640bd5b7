#include "cli/mcp_session_search.h"

#include <mutex>

#include <nlohmann/json.hpp>  // session_store.h holds Json by value

#include "talaria/agent/session_search.h"
#include "talaria/store/session_store.h"

namespace talaria::cli {
namespace {

class ReadOnlyRecall {
 public:
  explicit ReadOnlyRecall(std::string path) : path_(std::move(path)) {}

  ToolResult Run(const Json& args) {
    store::SessionStore* store = nullptr;
    {
      std::lock_guard lock(mu_);
      if (store_ == nullptr) {
        auto opened = store::SessionStore::OpenReadOnly(path_);
        if (!opened) {
          return ToolResult::Error(opened.error().code() == StatusCode::kNotFound
                                       ? "no talaria sessions yet (" + path_ + " does not exist)"
                                       : "cannot open the sessions database: " +
                                             opened.error().message());
        }
        store_ = std::move(*opened);
      }
      store = store_.get();
    }
    return agent::SessionSearchToolResult(*store, /*current_session_id=*/"", args);
  }

 private:
  std::mutex mu_;
  std::string path_;
  std::unique_ptr<store::SessionStore> store_;  // Guarded by mu_ until set; thread-safe after.
};

}  // namespace

LoopRouter WithSessionSearch(std::string sessions_path, AgentLoopRouter next,
                             AgentLoopRouterTakes next_takes) {
  auto recall = std::make_shared<ReadOnlyRecall>(std::move(sessions_path));
  LoopRouter r;
  r.route = [recall, next = std::move(next)](std::string_view name, const Json& args,
                                             ToolContext& ctx) -> std::optional<ToolResult> {
    if (name == "session_search") return recall->Run(args);
    if (next) return next(name, args, ctx);
    return std::nullopt;
  };
  r.takes = [next_takes = std::move(next_takes)](std::string_view name) {
    return name == "session_search" || (next_takes && next_takes(name));
  };
  return r;
}

}  // namespace talaria::cli
