// Recognises text copied from read_file output ("12|code" lines), which a model sometimes
// writes back verbatim, line numbers included.
#pragma once

#include <string_view>

namespace talaria::tools {

// True when at least 60 % of the non-empty lines (and at least 2) start with "N|" and those
// numbers run consecutively.
bool LooksLikeReadFileOutput(std::string_view content);

}  // namespace talaria::tools
