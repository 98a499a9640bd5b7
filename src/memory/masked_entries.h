// What the model is shown of stored entries: one the threat scan matches (written by hand, or
// before the scan knew its pattern) becomes
// "[BLOCKED: <file> entry contained threat pattern(s): <ids>]"; the file keeps it raw.
// Thread-safety: free function, no shared state.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace talaria::memory {

std::vector<std::string> MaskThreats(const std::vector<std::string>& entries,
                                     std::string_view file_name);

}  // namespace talaria::memory
