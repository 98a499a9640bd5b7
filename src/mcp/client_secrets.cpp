// SecretMask: a server's configured credentials kept out of what the client shows.
#include <algorithm>
#include <nlohmann/json.hpp>

#include "mcp/client_internal.h"
#include "mcp/server_url.h"
#include "talaria/base/ascii.h"
#include "talaria/base/redact.h"

namespace talaria::mcp::client_internal {
namespace {

constexpr std::string_view kRedacted = "[REDACTED]";

void AddValue(std::vector<std::string>& out, std::string_view value) {
  if (value.size() >= SecretMask::kMinMaskedChars) out.emplace_back(value);
}

// Authorization scheme names: words of a header value, but no secret.
bool IsAuthScheme(std::string_view word) {
  const std::string lower = AsciiLower(word);
  return lower == "bearer" || lower == "basic" || lower == "digest" || lower == "token";
}

// The value itself and each whitespace-separated word of it (scheme names aside).
void AddWithWords(std::vector<std::string>& out, std::string_view value) {
  AddValue(out, value);
  size_t i = 0;
  while (i < value.size()) {
    const size_t start = value.find_first_not_of(" \t", i);
    if (start == std::string_view::npos) break;
    const size_t end = value.find_first_of(" \t", start);
    const std::string_view word =
        value.substr(start, end == std::string_view::npos ? end : end - start);
    if (!IsAuthScheme(word)) AddValue(out, word);
    i = end == std::string_view::npos ? value.size() : end;
  }
}

}  // namespace

SecretMask::SecretMask(const ServerConfig& config) {
  for (const auto& [name, value] : config.headers) AddWithWords(values_, value);
  for (const auto& [name, value] : config.env) AddValue(values_, value);
  if (!config.url.empty()) {
    if (auto url = ParseServerUrl(config.url)) {
      AddValue(values_, url->user);
      AddValue(values_, url->password);
      if (const size_t q = url->target.find('?'); q != std::string::npos) {
        std::string_view query = std::string_view(url->target).substr(q + 1);
        while (!query.empty()) {
          const size_t amp = query.find('&');
          const std::string_view pair = query.substr(0, amp);
          if (const size_t eq = pair.find('='); eq != std::string_view::npos)
            AddValue(values_, pair.substr(eq + 1));
          if (amp == std::string_view::npos) break;
          query.remove_prefix(amp + 1);
        }
      }
    }
  }
  std::sort(values_.begin(), values_.end(), [](const std::string& a, const std::string& b) {
    return a.size() != b.size() ? a.size() > b.size() : a < b;
  });
  values_.erase(std::unique(values_.begin(), values_.end()), values_.end());
}

std::string SecretMask::Apply(std::string_view text) const {
  std::string out(text);
  for (const auto& value : values_) {
    for (size_t at = out.find(value); at != std::string::npos;
         at = out.find(value, at + kRedacted.size())) {
      out.replace(at, value.size(), kRedacted);
    }
  }
  return RedactSecrets(out);
}

}  // namespace talaria::mcp::client_internal
