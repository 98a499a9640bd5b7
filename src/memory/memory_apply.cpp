#include "memory/memory_apply.h"

#include <algorithm>

#include <nlohmann/json.hpp>

#include "memory/entries.h"
#include "talaria/base/strings.h"
#include "talaria/memory/threat_scan.h"

namespace talaria::memory {
namespace {

std::string_view ActionName(Action a) {
  switch (a) {
    case Action::kAdd:
      return "add";
    case Action::kReplace:
      return "replace";
    case Action::kRemove:
      return "remove";
  }
  return "?";
}

// "operation 2 (replace): " in a batch, "" for a lone change.
std::string Where(bool batch, size_t index, Action action) {
  if (!batch) return {};
  return "operation " + std::to_string(index + 1) + " (" + std::string(ActionName(action)) + "): ";
}

Refusal Refuse(std::string error, bool show_entries = true) {
  Refusal r;
  r.error = std::move(error);
  r.show_entries = show_entries;
  return r;
}

std::string Joined(const std::vector<std::string>& ids) { return Join(ids, ", "); }

}  // namespace

tl::expected<void, Refusal> ValidateOperations(const std::vector<Operation>& operations,
                                               bool batch) {
  if (operations.empty())
    return tl::unexpected(Refuse("operations is empty: nothing to do", false));
  for (size_t i = 0; i < operations.size(); ++i) {
    const Operation& op = operations[i];
    const std::string where = Where(batch, i, op.action);
    if (op.action == Action::kAdd || op.action == Action::kReplace) {
      const std::string_view content = Trim(op.content);
      if (content.empty()) {
        return tl::unexpected(Refuse(where + "content is empty: pass the entry text to " +
                                         std::string(ActionName(op.action)),
                                     false));
      }
      if (content.find(kEntryDelimiter) != std::string_view::npos) {
        return tl::unexpected(Refuse(where + "content contains a line holding only \xC2\xA7, the "
                                             "entry separator: make it several entries instead",
                                     false));
      }
      if (content.find('\0') != std::string_view::npos) {
        return tl::unexpected(Refuse(where + "content contains a NUL character", false));
      }
      if (std::vector<std::string> ids = ScanThreats(content); !ids.empty()) {
        Refusal r =
            Refuse(where + "content refused by the memory threat scan (pattern(s): " + Joined(ids) +
                       "). Memory is put into every future system prompt, so it must "
                       "not hold instructions to the model, hidden HTML, credential "
                       "paths, exfiltration commands, secrets or invisible characters.",
                   false);
        r.kind = RefusalKind::kThreat;
        return tl::unexpected(std::move(r));
      }
    }
    if ((op.action == Action::kReplace || op.action == Action::kRemove) &&
        Trim(op.old_text).empty()) {
      return tl::unexpected(
          Refuse(where + "old_text is needed for " + std::string(ActionName(op.action)) +
                 ": pass a short substring of the one entry to change (the current entries "
                 "are listed below), then call again"));
    }
  }
  return {};
}

tl::expected<Applied, Refusal> ApplyOperations(std::vector<std::string> entries,
                                               const std::vector<Operation>& operations,
                                               size_t limit, bool batch, std::string_view label) {
  const size_t before = JoinedChars(entries);
  Applied out;
  size_t added = 0;
  size_t duplicates = 0;
  size_t replaced = 0;
  size_t removed = 0;
  for (size_t i = 0; i < operations.size(); ++i) {
    const Operation& op = operations[i];
    const std::string where = Where(batch, i, op.action);
    const std::string content(Trim(op.content));
    if (op.action == Action::kAdd) {
      if (std::find(entries.begin(), entries.end(), content) != entries.end()) {
        ++duplicates;
        continue;
      }
      if (!batch && JoinedChars(entries) + CountChars(content) +
                            (entries.empty() ? 0 : CountChars(kEntryDelimiter)) >
                        limit) {
        Refusal r = Refuse(std::string(label) + " at " + UsageShort(before, limit) +
                           " chars. Adding this entry (" + std::to_string(CountChars(content)) +
                           " chars) would exceed the limit. Consolidate now: in one call with "
                           "`operations`, remove or shorten stale entries and add this one.");
        r.kind = RefusalKind::kFull;
        return tl::unexpected(std::move(r));
      }
      entries.push_back(content);
      ++added;
      continue;
    }
    const std::string old_text(Trim(op.old_text));
    std::vector<size_t> hits;
    for (size_t e = 0; e < entries.size(); ++e) {
      if (entries[e].find(old_text) != std::string::npos) hits.push_back(e);
    }
    if (hits.empty()) {
      return tl::unexpected(Refuse(where + "no entry contains \"" + Preview(old_text) +
                                   "\". Use a substring of one of the current entries."));
    }
    // Identical duplicates are one entry to the person: act on the first.
    const bool all_same = std::all_of(hits.begin(), hits.end(),
                                      [&](size_t h) { return entries[h] == entries[hits[0]]; });
    if (!all_same) {
      Refusal r = Refuse(where + std::to_string(hits.size()) + " different entries contain \"" +
                             Preview(old_text) + "\". Use a longer substring that only one has.",
                         false);
      r.matches = Json::array();
      for (size_t h : hits) r.matches.push_back(Preview(entries[h]));
      return tl::unexpected(std::move(r));
    }
    if (op.action == Action::kRemove) {
      entries.erase(entries.begin() + static_cast<std::ptrdiff_t>(hits[0]));
      ++removed;
      continue;
    }
    entries[hits[0]] = content;
    ++replaced;
    if (!batch && JoinedChars(entries) > limit && JoinedChars(entries) > before) {
      Refusal r = Refuse(std::string(label) + " at " + UsageShort(before, limit) +
                         " chars. This replacement would bring it to " +
                         std::to_string(JoinedChars(entries)) +
                         " chars, over the limit. Shorten the new text, or in one call with "
                         "`operations` also remove or shorten other entries.");
      r.kind = RefusalKind::kFull;
      return tl::unexpected(std::move(r));
    }
  }
  if (const size_t after = JoinedChars(entries); after > limit && after > before) {
    Refusal r = Refuse(std::string(label) + " at " + UsageShort(before, limit) +
                       " chars. These operations would leave it at " + std::to_string(after) +
                       " chars, over the limit. Nothing was changed: remove or shorten more "
                       "entries in the same batch.");
    r.kind = RefusalKind::kFull;
    return tl::unexpected(std::move(r));
  }
  out.changed = added + replaced + removed > 0;
  out.entries = std::move(entries);
  if (!batch) {
    if (duplicates > 0) {
      out.message = "Entry already exists (no duplicate added).";
    } else if (added > 0) {
      out.message = "Entry added.";
    } else if (replaced > 0) {
      out.message = "Entry replaced.";
    } else {
      out.message = "Entry removed.";
    }
  } else {
    out.message = "Applied " + std::to_string(operations.size()) +
                  " operation(s): " + std::to_string(added) + " added, " +
                  std::to_string(replaced) + " replaced, " + std::to_string(removed) + " removed";
    if (duplicates > 0) out.message += ", " + std::to_string(duplicates) + " already existed";
    out.message += ".";
  }
  return out;
}

}  // namespace talaria::memory
