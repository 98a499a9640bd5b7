// What terminal and process do to output before a model reads it: escape sequences removed,
// secrets redacted, and for a failing command a note on what its exit code usually means.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace talaria::tools {

// Removes ANSI/VT escape sequences (CSI, OSC, two-byte escapes) and other C0 controls except
// tab, newline and carriage return.
std::string StripAnsi(std::string_view text);

// StripAnsi, then RedactSecrets.
std::string CleanOutput(std::string_view text);

// "No matches found (not an error)" for `grep x f` with exit 1, "Command not found" for 127, ...;
// nullopt for 0 or when nothing useful is known. Judged on the last command of the line.
std::optional<std::string> ExitCodeMeaning(std::string_view command, int exit_code);

}  // namespace talaria::tools
