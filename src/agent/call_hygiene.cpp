#include "agent/call_hygiene.h"

#include <string_view>
#include <unordered_map>

#include "agent/argument_repair.h"
#include "talaria/core/tool_result.h"

namespace talaria::agent {
namespace {

std::string ErrorText(std::string_view message, std::string_view error_type) {
  return ToolResult::Error(message, CallStatus::kError, std::string(error_type)).text;
}

}  // namespace

std::string TruncatedCallMessage(std::string_view name) {
  return ErrorText("Your call to '" + std::string(name) +
                       "' was cut off before its arguments were complete (the response reached "
                       "its output limit), so it was not run. Send it again; split large content "
                       "into several smaller calls (e.g. write a big file in parts).",
                   "truncated_call");
}

std::vector<PreparedCall> PrepareCalls(std::span<const ToolCall> calls,
                                       std::span<const std::string> offered,
                                       const ToolNameLookup& lookup) {
  std::vector<PreparedCall> out;
  out.reserve(calls.size());
  std::unordered_map<std::string, size_t> first_of;  // name + '\0' + canonical args -> index
  for (size_t i = 0; i < calls.size(); ++i) {
    const ToolCall& call = calls[i];
    PreparedCall& prepared = out.emplace_back();
    prepared.id = call.id;
    prepared.name = call.name;
    auto reject = [&prepared](std::string text) {
      prepared.disposition = PreparedCall::Disposition::kRejected;
      prepared.rejection = std::move(text);
    };
    if (call.truncated) {
      reject(TruncatedCallMessage(call.name));
      continue;
    }
    std::optional<std::string> name = RepairToolName(call.name, offered, lookup);
    if (!name) {
      reject(ErrorText(UnknownToolMessage(call.name, offered), "unknown_tool"));
      continue;
    }
    prepared.name_repaired = *name != call.name;
    prepared.name = std::move(*name);
    auto args = RepairArguments(call.arguments);
    if (!args) {
      reject(ErrorText("Invalid arguments for " + prepared.name + ": " + args.error().message(),
                       "invalid_arguments"));
      continue;
    }
    prepared.arguments_repaired = args->repaired;
    prepared.arguments = DumpJson(args->args);
    prepared.canonical = CanonicalArguments(args->args);
    std::string key = prepared.name;
    key.push_back('\0');
    key += prepared.canonical;
    auto [it, inserted] = first_of.emplace(std::move(key), i);
    if (!inserted) {
      prepared.disposition = PreparedCall::Disposition::kDuplicate;
      prepared.duplicate_of = it->second;
    }
  }
  return out;
}

}  // namespace talaria::agent
