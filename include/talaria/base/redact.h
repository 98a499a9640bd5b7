// Secret redaction for text a model will read (command output, process logs): API keys and
// tokens of the common providers, private key blocks, bearer credentials, passwords in URLs and
// `NAME=value` assignments whose name looks secret. The shape stays readable: a key keeps its
// first few characters ("sk-pr…[REDACTED]"), an assignment keeps its name.
// Thread-safety: thread-safe (patterns are compiled once).
#pragma once

#include <string>
#include <string_view>

namespace talaria {

std::string RedactSecrets(std::string_view text);

// Whether RedactSecrets would change `text`: every rule in one pass (the web guard asks this of
// each URL).
bool ContainsSecret(std::string_view text);

}  // namespace talaria
