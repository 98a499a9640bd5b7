// The strict threat scan for text that will sit in a future system prompt (memory entries):
// injected instructions ("ignore previous instructions", "disregard your rules"), hidden
// HTML (comments, invisible divs), exfiltration (curl/wget carrying $KEY variables, "send ... to
// http..."), credential reads (cat .env, ~/.ssh, authorized_keys, talaria's own .env and
// config), edits to agent instruction files (AGENTS.md, CLAUDE.md), hard-coded secrets (the
// redactor's token patterns) and invisible Unicode (zero-width, bidi controls, tag characters).
// Thread-safety: thread-safe (patterns compiled once).
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace talaria::memory {

// The ids of the patterns `text` matches, in a fixed order; empty when it is clean.
std::vector<std::string> ScanThreats(std::string_view text);

}  // namespace talaria::memory
