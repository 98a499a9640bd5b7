// Dispatcher::Conclude: the ending of a call that never reaches the pipeline (kept apart from
// dispatcher.cpp, whose job is running calls).
#include "talaria/core/dispatcher.h"

#include <nlohmann/json.hpp>

namespace talaria {

ToolResult Dispatcher::Conclude(std::string_view name, std::string_view raw_args, ToolContext& ctx,
                                ToolResult result) const {
  const auto started = std::chrono::steady_clock::now();
  auto parsed = ParseJson(raw_args);
  const Json args = parsed && parsed->is_object() ? std::move(*parsed) : Json::object();
  std::shared_ptr<const ToolEntry> entry = registry_.Resolve(name);
  return Finish(entry ? std::string_view(entry->name()) : name, args, std::move(result),
                entry.get(), ctx, started);
}

}  // namespace talaria
