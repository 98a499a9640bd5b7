// Internationalized host names (IDNA 2008 with UTS #46 mapping, through Debian's libidn2): what a
// browser would connect to for "bücher.example", as its xn-- form.
// Thread-safety: pure function.
#pragma once

#include <string>
#include <string_view>

#include "talaria/base/status.h"

namespace talaria::web {

// The ASCII (A-label) form of `host`, lower case. The mapping also folds width and dots
// ("１２７。０。０。１" becomes "127.0.0.1"), so the caller judges the result, never the input.
// InvalidArgument for a name IDNA refuses.
Result<std::string> HostToAscii(std::string_view host);

}  // namespace talaria::web
