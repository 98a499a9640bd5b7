// The strict scope of the original's threat patterns, re-stated for talaria. Strict because a
// memory entry is put into every future system prompt: one hit refuses the write. Patterns are
// RE2 (linear time: content is hostile).
#include "talaria/memory/threat_scan.h"

#include <re2/re2.h>

#include <array>
#include <memory>

#include "talaria/base/redact.h"

namespace talaria::memory {
namespace {

struct Pattern {
  const char* id;
  const char* regex;
};

// Words between two anchors: a few, on one line (an entry is short; this keeps the phrase
// together without letting a pattern span a whole file).
#define TALARIA_GAP "[^\\n]{0,60}?"
// What an exfiltration order sends: the conversation, the memory, keys and secrets, the user's
// files or data, or an unnamed "it"/"everything" (whatever the injected text pointed at).
#define TALARIA_PRIVATE                                                                      \
  R"(\b(?:conversations?|chats?|history|transcripts?|memor(?:y|ies)|prompts?|instructions|)" \
  R"(context|keys?|secrets?|tokens?|passwords?|passphrases?|credentials?|env|environment|)"  \
  R"(cookies?|sessions?|contents?|everything|anything|it|them|(?:the|all|our|my|your|)"      \
  R"(user'?s?|private|previous|personal|local|home)\s+(?:[a-z]+\s+)?(?:messages|files?|)"    \
  R"(data|documents?|folders?|notes|info|information|details))\b)"

constexpr std::array<Pattern, 14> kPatterns = {{
    // Injected instructions.
    {"prompt_injection",
     R"((?i)\b(?:ignore|forget|override|bypass)\s+(?:all\s+|any\s+|the\s+|your\s+|these\s+|those\s+)*(?:previous|prior|above|earlier|preceding|existing|original|system)?\s*(?:instructions?|prompts?|rules|directions|guidelines|guardrails|constraints)\b)"},
    {"disregard_rules",
     R"((?i)\bdisregard\b)" TALARIA_GAP
     R"(\b(?:instructions?|rules|guidelines|policies|policy|prompts?|safety|restrictions|directives?|the\s+user)\b)"},
    {"role_hijack",
     R"((?i)(?:\byou\s+are\s+now\s+(?:a|an|in|the|no\s+longer)\b|\bnew\s+system\s+prompt\b|\bsystem\s+prompt\s+override\b|\bact\s+as\s+if\s+you\s+have\s+no\s+(?:rules|restrictions)\b|\bjailbreak\b|\bdeveloper\s+mode\b))"},
    {"conceal_from_user",
     R"((?i)\b(?:do\s+not|don't|never)\s+(?:tell|inform|show|reveal\s+to|mention\s+to|notify)\s+(?:the\s+)?user\b)"},
    // Hidden HTML.
    {"html_comment_injection", R"(<!--)"},
    {"hidden_html",
     R"((?i)<[a-z][^>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0|opacity\s*:\s*0(?:[^.\d]|$)|\shidden(?:\s|>|=|/)|aria-hidden))"},
    // Exfiltration and credential reads.
    {"exfil_curl_secret",
     R"((?i)\b(?:curl|wget|nc|ncat|httpie|http)\b[^\n]*\$\{?[A-Za-z_]*(?:KEY|TOKEN|SECRET|PASS|PASSWORD|CREDENTIALS?|AUTH)[A-Za-z_]*)"},
    {"read_credentials",
     R"((?i)\b(?:cat|less|more|head|tail|grep|base64|xxd|strings|od)\b[^\n]*(?:(?:^|[\s/"'=])\.env\b|\.netrc\b|\.pgpass\b|\.npmrc\b|\.pypirc\b|credentials\b|\bid_(?:rsa|dsa|ecdsa|ed25519)\b|\.aws/|\.kube/config|\.docker/config\.json|\.git-credentials|/etc/shadow))"},
    // Sending *something private* to a URL, or something unnamed ("it", "everything"): "post
    // results to https://ci..." is a note about a build, not an exfiltration order.
    {"exfil_send",
     R"((?i)\b(?:send|post|upload|exfiltrate|forward|transmit|leak|pipe)\b)" TALARIA_GAP
         TALARIA_PRIVATE TALARIA_GAP R"(\bto\s+(?:https?|ftp)://)"},
    {"ssh_backdoor", R"((?i)authorized_keys)"},
    {"ssh_access", R"((?i)(?:~|\$HOME|\$\{HOME\}|/home/[^/\s]+|/root)/\.ssh\b)"},
    {"agent_secrets",
     R"((?i)(?:~|\$HOME|\$\{HOME\}|\$TALARIA_HOME|\$\{TALARIA_HOME\}|/home/[^/\s]+|/root)?/?\.(?:talaria|hermes)/(?:\.env|config\.ya?ml|trust))"},
    {"agent_instructions_edit",
     R"((?i)\b(?:edit|modify|write|overwrite|append|update|change|rewrite|replace|delete|remove|add)\b)" TALARIA_GAP
     R"((?:\bAGENTS\.md\b|\bCLAUDE\.md\b|\.cursorrules\b|\bSOUL\.md\b))"},
    {"exfil_encoded_pipe",
     R"((?i)\|\s*(?:curl|wget|nc|ncat)\b[^\n]*(?:https?://|\d+\.\d+\.\d+\.\d+))"},
}};

#undef TALARIA_GAP
#undef TALARIA_PRIVATE

const std::vector<std::unique_ptr<RE2>>& Compiled() {
  static const auto* compiled = [] {
    auto* out = new std::vector<std::unique_ptr<RE2>>();
    RE2::Options options;
    options.set_log_errors(false);
    options.set_never_capture(true);
    for (const Pattern& p : kPatterns) out->push_back(std::make_unique<RE2>(p.regex, options));
    return out;
  }();
  return *compiled;
}

// Characters a reader cannot see that change what a model reads: zero-width characters, bidi
// controls, word joiners, the BOM and the tag block (U+E0000..E007F hides ASCII in plain sight).
bool IsInvisible(char32_t cp) {
  return (cp >= 0x200B && cp <= 0x200F) || (cp >= 0x202A && cp <= 0x202E) ||
         (cp >= 0x2060 && cp <= 0x2064) || (cp >= 0x2066 && cp <= 0x2069) || cp == 0xFEFF ||
         cp == 0x00AD || cp == 0x180E || (cp >= 0xE0000 && cp <= 0xE007F);
}

bool HasInvisibleUnicode(std::string_view text) {
  for (size_t i = 0; i < text.size();) {
    const auto lead = static_cast<unsigned char>(text[i]);
    size_t len = 1;
    char32_t cp = lead;
    if (lead >= 0xF0 && i + 3 < text.size()) {
      len = 4;
      cp = ((lead & 0x07U) << 18) | ((static_cast<unsigned char>(text[i + 1]) & 0x3FU) << 12) |
           ((static_cast<unsigned char>(text[i + 2]) & 0x3FU) << 6) |
           (static_cast<unsigned char>(text[i + 3]) & 0x3FU);
    } else if (lead >= 0xE0 && i + 2 < text.size()) {
      len = 3;
      cp = ((lead & 0x0FU) << 12) | ((static_cast<unsigned char>(text[i + 1]) & 0x3FU) << 6) |
           (static_cast<unsigned char>(text[i + 2]) & 0x3FU);
    } else if (lead >= 0xC0 && i + 1 < text.size()) {
      len = 2;
      cp = ((lead & 0x1FU) << 6) | (static_cast<unsigned char>(text[i + 1]) & 0x3FU);
    }
    if (IsInvisible(cp)) return true;
    i += len;
  }
  return false;
}

}  // namespace

std::vector<std::string> ScanThreats(std::string_view text) {
  std::vector<std::string> ids;
  const auto& compiled = Compiled();
  const re2::StringPiece input(text.data(), text.size());
  for (size_t i = 0; i < kPatterns.size(); ++i) {
    if (compiled[i]->ok() && RE2::PartialMatch(input, *compiled[i]))
      ids.emplace_back(kPatterns[i].id);
  }
  // The redactor knows the token formats and secret-looking assignments: whatever it would
  // redact is a secret that must not sit in a prompt.
  if (RedactSecrets(text) != text) ids.emplace_back("hardcoded_secret");
  if (HasInvisibleUnicode(text)) ids.emplace_back("invisible_unicode");
  return ids;
}

}  // namespace talaria::memory
