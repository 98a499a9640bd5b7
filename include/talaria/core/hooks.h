// Hooks around every tool call: pre hooks (block, modify arguments, or observe), post hooks
// (observe exactly once per call, whatever its ending) and result transforms.
//
// In-process C++ hooks register here directly; external command hooks from config.yaml are
// adapted into the same interface (command_hooks.h). A hook that throws is logged and ignored:
// a broken hook never breaks the call.
// Thread-safety: HookSet is thread-safe; hooks run concurrently on the calling threads, so a
// hook must be thread-safe itself.
#pragma once

#include <atomic>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/tool_result.h"

namespace talaria {

struct PreToolEvent {
  std::string_view tool_name;
  const Json& args;
  const ToolContext& ctx;
};

struct PreHookDecision {
  enum class Kind : unsigned char { kContinue, kBlock, kModify };
  Kind kind = Kind::kContinue;
  std::string message;             // kBlock: shown to the model as the error
  std::shared_ptr<Json> new_args;  // kModify: replacement arguments (an object)

  static PreHookDecision Continue() { return {}; }
  static PreHookDecision Block(std::string message) {
    return {Kind::kBlock, std::move(message), nullptr};
  }
  static PreHookDecision Modify(std::shared_ptr<Json> args) {
    return {Kind::kModify, {}, std::move(args)};
  }
};

struct PostToolEvent {
  std::string_view tool_name;
  const Json& args;
  const ToolResult& result;
  double duration_ms = 0;
  const ToolContext& ctx;
};

using PreHook = std::function<PreHookDecision(const PreToolEvent&)>;
using PostHook = std::function<void(const PostToolEvent&)>;
// Returns a replacement text, or nullopt to leave the result alone. First replacement wins.
using TransformResultHook = std::function<std::optional<std::string>(const PostToolEvent&)>;

// Whether the caller already ran the pre hooks for this call (the executor does, in call
// order): then they are invoked as observers only and cannot block or modify.
enum class PreHookMode : unsigned char { kDecide, kObserveOnly };

class HookSet {
 public:
  void AddPreHook(PreHook hook);
  void AddPostHook(PostHook hook);
  void AddTransformResult(TransformResultHook hook);

  bool has_pre() const;
  bool has_post() const;
  bool has_transform() const;

  // Runs the pre hooks in registration order. The first block wins; modifications chain (each
  // later hook sees the modified arguments). In kObserveOnly mode decisions are ignored.
  PreHookDecision RunPre(std::string_view tool_name, const Json& args, const ToolContext& ctx,
                         PreHookMode mode) const;
  void RunPost(const PostToolEvent& event) const;
  std::optional<std::string> RunTransform(const PostToolEvent& event) const;

 private:
  struct Lists {
    std::vector<PreHook> pre;
    std::vector<PostHook> post;
    std::vector<TransformResultHook> transform;
  };
  std::shared_ptr<const Lists> lists() const;

  // Read on every call without taking mu_: most dispatchers have no hooks at all.
  std::atomic<bool> has_pre_{false};
  std::atomic<bool> has_post_{false};
  std::atomic<bool> has_transform_{false};
  mutable std::mutex mu_;
  std::shared_ptr<const Lists> lists_ = std::make_shared<Lists>();  // Guarded by mu_.
};

}  // namespace talaria
