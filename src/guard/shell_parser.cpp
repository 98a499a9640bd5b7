// ParseShell, the public entry point: cheap size checks over the raw text, then a Parser over
// the whole input (shell_parser_internal.h; its parts live in shell_parse_*.cpp). Also the
// out-of-line member of the public Redirection struct.
#include "talaria/guard/shell_parser.h"

#include <algorithm>
#include <string>
#include <string_view>
#include <utility>

#include "guard/shell_parser_internal.h"

namespace talaria::safety {

bool Redirection::IsFdTarget() const {
  if (op != RedirectOp::kDupOut && op != RedirectOp::kDupIn) return false;
  std::string_view t = target.text;
  if (t == "-") return true;
  if (!t.empty() && t.back() == '-') t.remove_suffix(1);
  if (t.empty()) return false;
  return std::all_of(t.begin(), t.end(), [](char c) { return c >= '0' && c <= '9'; });
}

namespace shell_internal {

bool Parser::ParseAll() {
  Stops stops;
  stops.eof = true;
  if (!ParseSequence(stops)) return false;
  return true;
}

}  // namespace shell_internal

namespace {

using shell_internal::Parser;
using shell_internal::Shared;

// Cheap checks over the raw text before parsing: total size, the longest run without
// whitespace or an operator character, and the number of separators.
Status CheckLimits(std::string_view input, const ParseLimits& limits) {
  if (input.size() > limits.max_input) {
    return ResourceExhaustedError("command is longer than " + std::to_string(limits.max_input) +
                                  " characters");
  }
  size_t run = 0;
  size_t separators = 0;
  for (const char c : input) {
    switch (c) {
      case ';':
      case '&':
      case '|':
      case '\n':
        ++separators;
        run = 0;
        break;
      case ' ':
      case '\t':
      case '(':
      case ')':
      case '<':
      case '>':
        run = 0;
        break;
      default:
        if (++run > limits.max_run) {
          return ResourceExhaustedError("command has more than " + std::to_string(limits.max_run) +
                                        " characters without a separator");
        }
    }
  }
  if (separators >= limits.max_separators) {
    return ResourceExhaustedError("command has " + std::to_string(separators) +
                                  " separators (limit " + std::to_string(limits.max_separators) +
                                  ")");
  }
  return Status::Ok();
}

}  // namespace

Result<ParsedScript> ParseShell(std::string_view input, const ParseLimits& limits) {
  if (Status s = CheckLimits(input, limits); !s.ok()) return Err(std::move(s));
  ParsedScript script;
  Shared shared;
  shared.out = &script;
  shared.limits = &limits;
  Parser parser(input, shared);
  const bool ok = parser.ParseAll();
  if (!shared.error.ok()) return Err(std::move(shared.error));
  if (!ok) return Err(InternalError("shell parser failed without a reason"));
  return script;
}

}  // namespace talaria::safety
