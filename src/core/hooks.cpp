#include "talaria/core/hooks.h"

#include <cstdio>
#include <exception>

#include <nlohmann/json.hpp>

namespace talaria {

void HookSet::AddPreHook(PreHook hook) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<Lists>(*lists_);
  next->pre.push_back(std::move(hook));
  lists_ = std::move(next);
  has_pre_ = true;
}

void HookSet::AddPostHook(PostHook hook) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<Lists>(*lists_);
  next->post.push_back(std::move(hook));
  lists_ = std::move(next);
  has_post_ = true;
}

void HookSet::AddTransformResult(TransformResultHook hook) {
  std::lock_guard lock(mu_);
  auto next = std::make_shared<Lists>(*lists_);
  next->transform.push_back(std::move(hook));
  lists_ = std::move(next);
  has_transform_ = true;
}

std::shared_ptr<const HookSet::Lists> HookSet::lists() const {
  std::lock_guard lock(mu_);
  return lists_;
}

bool HookSet::has_pre() const { return has_pre_.load(std::memory_order_acquire); }
bool HookSet::has_post() const { return has_post_.load(std::memory_order_acquire); }
bool HookSet::has_transform() const { return has_transform_.load(std::memory_order_acquire); }

PreHookDecision HookSet::RunPre(std::string_view tool_name, const Json& args,
                                const ToolContext& ctx, PreHookMode mode) const {
  auto l = lists();
  PreHookDecision result;
  std::shared_ptr<Json> current;  // modified args so far
  for (const auto& hook : l->pre) {
    PreHookDecision d;
    try {
      d = hook(PreToolEvent{tool_name, current ? *current : args, ctx});
    } catch (const std::exception& e) {
      std::fprintf(stderr, "talaria: pre hook failed for %.*s: %s\n",
                   static_cast<int>(tool_name.size()), tool_name.data(), e.what());
      continue;
    } catch (...) {
      continue;
    }
    if (mode == PreHookMode::kObserveOnly) continue;
    if (d.kind == PreHookDecision::Kind::kBlock) return d;
    if (d.kind == PreHookDecision::Kind::kModify && d.new_args && d.new_args->is_object()) {
      current = d.new_args;
    }
  }
  if (current) return PreHookDecision::Modify(std::move(current));
  return result;
}

void HookSet::RunPost(const PostToolEvent& event) const {
  auto l = lists();
  for (const auto& hook : l->post) {
    try {
      hook(event);
    } catch (...) {
      std::fprintf(stderr, "talaria: post hook failed for %.*s\n",
                   static_cast<int>(event.tool_name.size()), event.tool_name.data());
    }
  }
}

std::optional<std::string> HookSet::RunTransform(const PostToolEvent& event) const {
  auto l = lists();
  for (const auto& hook : l->transform) {
    try {
      if (auto text = hook(event)) return text;
    } catch (...) {
      // fail-open: a broken transform leaves the result alone
    }
  }
  return std::nullopt;
}

}  // namespace talaria
