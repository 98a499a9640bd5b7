#include "memory/entries.h"

#include "talaria/base/strings.h"
#include "talaria/base/utf8.h"
#include "talaria/memory/memory_store.h"

namespace talaria::memory {

std::vector<std::string> SplitEntries(std::string_view raw) {
  std::vector<std::string> out;
  while (true) {
    const size_t at = raw.find(kEntryDelimiter);
    std::string_view entry = Trim(raw.substr(0, at));
    if (!entry.empty()) out.emplace_back(entry);
    if (at == std::string_view::npos) break;
    raw.remove_prefix(at + kEntryDelimiter.size());
  }
  return out;
}

std::string JoinEntries(const std::vector<std::string>& entries) {
  return Join(entries, kEntryDelimiter);
}

size_t CountChars(std::string_view text) {
  size_t n = 0;
  for (const char c : text) n += (static_cast<unsigned char>(c) & 0xC0) != 0x80 ? 1 : 0;
  return n;
}

size_t JoinedChars(const std::vector<std::string>& entries) {
  if (entries.empty()) return 0;
  size_t n = CountChars(kEntryDelimiter) * (entries.size() - 1);
  for (const std::string& e : entries) n += CountChars(e);
  return n;
}

std::string DriftReason(std::string_view raw, size_t limit) {
  size_t bad = 0;
  if (!IsValidUtf8(raw, &bad)) {
    return "it is not valid UTF-8 (byte " + std::to_string(bad) + ")";
  }
  if (raw.find('\0') != std::string_view::npos) return "it contains a NUL byte";
  const std::vector<std::string> entries = SplitEntries(raw);
  // Trailing and leading whitespace of the whole file is an editor's doing (a final newline),
  // not content: the rewrite drops it and nothing the person wrote changes.
  if (JoinEntries(entries) != Trim(raw)) {
    return "it has empty entries or blank space around a \xC2\xA7 separator, so it does not "
           "read back as it was written";
  }
  for (size_t i = 0; i < entries.size(); ++i) {
    const size_t chars = CountChars(entries[i]);
    if (chars > limit) {
      return "entry " + std::to_string(i + 1) + " has " + std::to_string(chars) +
             " characters, more than the whole file's limit of " + std::to_string(limit);
    }
  }
  return {};
}

std::string UsageText(size_t chars, size_t limit) {
  const size_t percent = limit == 0 ? 100 : chars * 100 / limit;
  return std::to_string(percent) + "% \xE2\x80\x94 " + UsageShort(chars, limit) + " chars";
}

std::string UsageShort(size_t chars, size_t limit) {
  return std::to_string(chars) + "/" + std::to_string(limit);
}

std::string Preview(std::string_view entry, size_t max_chars) {
  size_t chars = 0;
  for (size_t i = 0; i < entry.size(); ++i) {
    if ((static_cast<unsigned char>(entry[i]) & 0xC0) == 0x80) continue;
    if (chars == max_chars) return std::string(entry.substr(0, i)) + "...";
    ++chars;
  }
  return std::string(entry);
}

}  // namespace talaria::memory
