// ParseOperation and OperationJson (operation_json.h).
#include "talaria/memory/operation_json.h"

#include <nlohmann/json.hpp>

namespace talaria::memory {
namespace {

Result<Action> ParseAction(const Json& value) {
  if (value.is_string()) {
    const std::string& s = value.get_ref<const std::string&>();
    if (s == "add") return Action::kAdd;
    if (s == "replace") return Action::kReplace;
    if (s == "remove") return Action::kRemove;
  }
  return Err(InvalidArgumentError("action must be one of add, replace, remove"));
}

}  // namespace

Result<Operation> ParseOperation(const Json& object) {
  if (!object.is_object()) return Err(InvalidArgumentError("is not an object"));
  auto action = object.find("action");
  if (action == object.end()) {
    return Err(InvalidArgumentError(
        "action is missing: say add, replace or remove (memory has no read action; the "
        "entries are in your system prompt and in every memory result)"));
  }
  Operation op;
  op.action = TALARIA_TRY(ParseAction(*action));
  for (const char* key : {"content", "old_text"}) {
    auto it = object.find(key);
    if (it == object.end() || it->is_null()) continue;
    if (!it->is_string()) return Err(InvalidArgumentError(std::string(key) + " must be a string"));
    (std::string_view(key) == "content" ? op.content : op.old_text) = it->get<std::string>();
  }
  return op;
}

Json OperationJson(const Operation& op) {
  Json out = Json::object();
  out["action"] = op.action == Action::kAdd       ? "add"
                  : op.action == Action::kReplace ? "replace"
                                                  : "remove";
  if (!op.content.empty()) out["content"] = op.content;
  if (!op.old_text.empty()) out["old_text"] = op.old_text;
  return out;
}

}  // namespace talaria::memory
