// The frozen block the system prompt carries: taken once when a session opens, so the prompt
// prefix stays cache-stable while the session's writes change only the files.
#include <algorithm>

#include "memory/entries.h"
#include "memory/masked_entries.h"
#include "talaria/memory/memory_store.h"

namespace talaria::memory {
namespace {

std::string Rule() {
  std::string line;
  for (int i = 0; i < 46; ++i) line += "\xE2\x95\x90";  // '═'
  return line;
}

std::string Block(const MemoryStore& store, Target target) {
  auto read = store.Read(target);
  if (!read || read->empty()) return {};
  std::vector<std::string> entries;
  for (std::string& e : *read) {
    if (std::find(entries.begin(), entries.end(), e) == entries.end())
      entries.push_back(std::move(e));
  }
  const size_t limit = store.LimitOf(target);
  const std::string usage = UsageText(JoinedChars(entries), limit);
  const std::vector<std::string> shown = MaskThreats(entries, TargetFileName(target));
  const char* header =
      target == Target::kUser ? "USER PROFILE (who the user is)" : "MEMORY (your personal notes)";
  return Rule() + "\n" + header + " [" + usage + "]\n" + Rule() + "\n" + JoinEntries(shown);
}

}  // namespace

std::string MemoryStore::Snapshot() const {
  std::string out = Block(*this, Target::kMemory);
  std::string user = Block(*this, Target::kUser);
  if (!out.empty() && !user.empty()) out += "\n\n";
  return out + user;
}

}  // namespace talaria::memory
