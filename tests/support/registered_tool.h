// Calling a registered tool's handler from a test as the dispatcher would, and reading its JSON.
#pragma once

#include <gtest/gtest.h>

#include <string>

#include "talaria/base/json.h"
#include "talaria/core/registry.h"

namespace talaria::test_support {

// Runs the tool registered as `name` with `ctx`; its whole result goes to `*result` when given.
// Returns the result's JSON (null, with a test failure, when there is no such tool or the text
// is not JSON).
inline Json CallRegisteredTool(const std::string& name, const Json& args, ToolContext& ctx,
                               ToolResult* result = nullptr) {
  auto entry = Registry::Global().GetEntry(name);
  EXPECT_NE(entry, nullptr) << name;
  if (entry == nullptr) return Json();
  ToolResult r = entry->handler()(args, ctx);
  auto j = ParseJson(r.text);
  EXPECT_TRUE(j.has_value()) << r.text;
  if (result != nullptr) *result = std::move(r);
  return j.has_value() ? *j : Json();
}

}  // namespace talaria::test_support
