// The CLI's approval prompt: asks on the controlling terminal (/dev/tty), so it works even when
// stdin and stdout are pipes, and exists only when there is such a terminal.
#pragma once

#include <chrono>
#include <memory>

#include "talaria/guard/approvals.h"

namespace talaria::cli {

// Null when the process has no controlling terminal (nobody can answer).
std::shared_ptr<safety::ApprovalPrompter> MakeTtyPrompter(
    std::chrono::seconds timeout = std::chrono::seconds(120));

}  // namespace talaria::cli
