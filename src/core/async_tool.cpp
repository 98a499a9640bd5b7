#include "talaria/core/async_tool.h"

#include <memory>
#include <nlohmann/json.hpp>

#include "talaria/base/status.h"

namespace talaria {

AsyncHandler MakeAsyncHandler(SyncHandler body) {
  TALARIA_CHECK(static_cast<bool>(body));
  auto shared_body = std::make_shared<const SyncHandler>(std::move(body));
  return [shared_body](Json args, ToolContext& ctx) {
    // The context is copied: the caller's may be gone before a queued task starts. Its stop
    // token and deadline are the call's (the dispatcher's own stop source lives on in the token).
    return RunAsync([shared_body, args = std::move(args), task_ctx = ctx]() mutable {
      return (*shared_body)(args, task_ctx);
    });
  };
}

}  // namespace talaria
