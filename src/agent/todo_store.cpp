#include "agent/todo_store.h"

#include <algorithm>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "agent/text_util.h"
#include "talaria/base/ascii.h"
#include "talaria/base/strings.h"
#include "talaria/core/tool_result.h"

namespace talaria::agent {
namespace {

constexpr std::string_view kStatuses[] = {"pending", "in_progress", "completed", "cancelled"};

bool IsStatus(std::string_view s) {
  return std::find(std::begin(kStatuses), std::end(kStatuses), s) != std::end(kStatuses);
}

std::string StringOf(const Json& item, std::string_view key) {
  auto it = item.find(key);
  if (it == item.end() || it->is_null()) return {};
  if (it->is_string()) return it->get<std::string>();
  return DumpJson(*it);  // a number id, ...
}

std::string BoundContent(std::string content) {
  if (content.size() <= kMaxTodoContentChars) return content;
  std::string out(Utf8Prefix(content, kMaxTodoContentChars));
  out += kTruncationMarker;
  return out;
}

std::string NormalStatus(std::string_view status) {
  std::string lower = AsciiLower(Trim(status));
  return IsStatus(lower) ? lower : std::string("pending");
}

Json ItemJson(const TodoItem& item) {
  Json out = Json::object();
  out["id"] = item.id;
  out["content"] = item.content;
  out["status"] = item.status;
  if (!item.parent.empty()) out["parent"] = item.parent;
  return out;
}

// Duplicate ids collapse to their last occurrence, which keeps its own position.
void CollapseDuplicates(std::vector<TodoItem>& items) {
  std::unordered_map<std::string, size_t> last;
  for (size_t i = 0; i < items.size(); ++i) last[items[i].id] = i;
  std::vector<TodoItem> out;
  out.reserve(last.size());
  for (size_t i = 0; i < items.size(); ++i) {
    if (last[items[i].id] == i) out.push_back(std::move(items[i]));
  }
  items = std::move(out);
}

}  // namespace

void TodoStore::Replace(const Json& todos) {
  std::vector<TodoItem> items;
  for (const Json& raw : todos) {
    if (!raw.is_object()) continue;
    TodoItem item;
    item.id = std::string(Trim(StringOf(raw, "id")));
    if (item.id.empty()) item.id = "?";
    item.content = BoundContent(std::string(Trim(StringOf(raw, "content"))));
    if (item.content.empty()) item.content = "(no description)";
    item.status = NormalStatus(StringOf(raw, "status"));
    item.parent = std::string(Trim(StringOf(raw, "parent")));
    items.push_back(std::move(item));
  }
  CollapseDuplicates(items);
  if (items.size() > kMaxTodoItems) items.resize(kMaxTodoItems);
  items_ = std::move(items);
}

void TodoStore::Merge(const Json& todos) {
  for (const Json& raw : todos) {
    if (!raw.is_object()) continue;
    const std::string id(Trim(StringOf(raw, "id")));
    if (id.empty()) continue;
    auto it = std::find_if(items_.begin(), items_.end(),
                           [&id](const TodoItem& item) { return item.id == id; });
    if (it == items_.end()) {
      if (items_.size() >= kMaxTodoItems) continue;
      TodoItem item;
      item.id = id;
      item.content = BoundContent(std::string(Trim(StringOf(raw, "content"))));
      if (item.content.empty()) item.content = "(no description)";
      item.status = NormalStatus(StringOf(raw, "status"));
      item.parent = std::string(Trim(StringOf(raw, "parent")));
      items_.push_back(std::move(item));
      continue;
    }
    if (raw.contains("content")) {
      std::string content = BoundContent(std::string(Trim(StringOf(raw, "content"))));
      if (!content.empty()) it->content = std::move(content);
    }
    if (raw.contains("status")) it->status = NormalStatus(StringOf(raw, "status"));
    if (raw.contains("parent")) it->parent = std::string(Trim(StringOf(raw, "parent")));
  }
}

Json TodoStore::Apply(const Json& args) {
  if (args.is_object()) {
    auto todos = args.find("todos");
    if (todos != args.end() && todos->is_array()) {
      auto merge = args.find("merge");
      if (merge != args.end() && merge->is_boolean() && merge->get<bool>()) {
        Merge(*todos);
      } else {
        Replace(*todos);
      }
    }
  }
  return Result();
}

Json TodoStore::Result() const {
  Json out = Json::object();
  Json list = Json::array();
  int counts[4] = {0, 0, 0, 0};
  for (const TodoItem& item : items_) {
    list.push_back(ItemJson(item));
    for (size_t s = 0; s < 4; ++s) {
      if (item.status == kStatuses[s]) ++counts[s];
    }
  }
  out["todos"] = std::move(list);
  Json summary = Json::object();
  summary["total"] = items_.size();
  for (size_t s = 0; s < 4; ++s) summary[std::string(kStatuses[s])] = counts[s];
  out["summary"] = std::move(summary);
  if (counts[1] > 1) {
    out["note"] = std::to_string(counts[1]) +
                  " items are in_progress; keep exactly one in_progress at a time.";
  }
  return out;
}

Json TodoStore::Snapshot() const {
  Json list = Json::array();
  for (const TodoItem& item : items_) list.push_back(ItemJson(item));
  Json out = Json::object();
  out["todos"] = std::move(list);
  return out;
}

void TodoStore::Restore(const Json& snapshot) {
  items_.clear();
  if (!snapshot.is_object()) return;
  auto todos = snapshot.find("todos");
  if (todos != snapshot.end() && todos->is_array()) Replace(*todos);
}

std::string TodoStore::FormatForInjection() const {
  std::string out;
  for (const TodoItem& item : items_) {
    const char* marker = nullptr;
    if (item.status == "in_progress") {
      marker = "[>]";
    } else if (item.status == "pending") {
      marker = "[ ]";
    } else {
      continue;  // finished and cancelled items are history, not work
    }
    out += "- ";
    out += marker;
    out += " " + item.id + ". " + item.content + " (" + item.status + ")\n";
  }
  if (out.empty()) return out;
  return "[Your active task list was preserved across context compression]\n" + out;
}

}  // namespace talaria::agent
