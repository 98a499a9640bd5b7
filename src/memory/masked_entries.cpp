#include "memory/masked_entries.h"

#include "memory/entries.h"
#include "talaria/base/strings.h"
#include "talaria/memory/threat_scan.h"

namespace talaria::memory {

std::vector<std::string> MaskThreats(const std::vector<std::string>& entries,
                                     std::string_view file_name) {
  // One scan of the whole file first: an entry that matches also matches inside the joined
  // text (the patterns are unanchored, and the separator's newlines are what an entry's edges
  // see there too), so a clean file means clean entries, and the common case costs one pass
  // instead of one per entry.
  if (ScanThreats(JoinEntries(entries)).empty()) return entries;
  std::vector<std::string> out;
  out.reserve(entries.size());
  for (const std::string& e : entries) {
    std::vector<std::string> ids = ScanThreats(e);
    if (ids.empty()) {
      out.push_back(e);
    } else {
      out.push_back("[BLOCKED: " + std::string(file_name) +
                    " entry contained threat pattern(s): " + Join(ids, ", ") + "]");
    }
  }
  return out;
}

}  // namespace talaria::memory
