// Target parsing and resolution (target_ref.h). The id shapes are checked by hand (no regex):
// each is a short run of one character class.
#include "messaging/target_ref.h"

#include <algorithm>
#include <string>

#include "talaria/base/ascii.h"
#include "talaria/base/strings.h"

namespace talaria::messaging {
namespace {

bool AllOf(std::string_view s, bool (*pred)(char)) {
  return !s.empty() && std::all_of(s.begin(), s.end(), pred);
}
bool Digit(char c) { return c >= '0' && c <= '9'; }
bool UpperOrDigit(char c) { return Digit(c) || (c >= 'A' && c <= 'Z'); }
bool TopicChar(char c) {
  return Digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == '-';
}
bool Base64Char(char c) {
  return Digit(c) || (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '+' || c == '/' ||
         c == '=';
}

bool IsPhone(std::string_view s) {
  return s.size() >= 7 && s.size() <= 16 && s[0] == '+' && AllOf(s.substr(1), Digit);
}
bool IsTelegramChat(std::string_view s) {
  if (s.starts_with('@')) return s.size() > 1 && AllOf(s.substr(1), TopicChar);
  if (s.starts_with('-')) s.remove_prefix(1);
  return AllOf(s, Digit);
}
bool IsSlackId(std::string_view s) {
  return s.size() >= 3 && (s[0] == 'C' || s[0] == 'G' || s[0] == 'D' || s[0] == 'U') &&
         AllOf(s, UpperOrDigit);
}
bool IsSlackTs(std::string_view s) {
  const size_t dot = s.find('.');
  return dot != std::string_view::npos && AllOf(s.substr(0, dot), Digit) &&
         AllOf(s.substr(dot + 1), Digit);
}
bool IsEmail(std::string_view s) {
  const size_t at = s.find('@');
  return at != std::string_view::npos && at > 0 && at + 1 < s.size() &&
         s.find_first_of(" \t\r\n<>,;\"") == std::string_view::npos &&
         s.find('@', at + 1) == std::string_view::npos;
}
bool IsMatrixRoom(std::string_view s) {
  return s.size() > 3 && (s[0] == '!' || s[0] == '#') && s.find(':') != std::string_view::npos &&
         s.find_first_of(" \t\r\n/") == std::string_view::npos;
}
bool IsSignalRecipient(std::string_view s) {
  return IsPhone(s) || (s.starts_with("group.") && AllOf(s.substr(6), Base64Char));
}

// `rest` split at its last ':' into chat and thread, when the thread part has the given shape.
void SplitThread(std::string_view rest, bool (*thread_shape)(std::string_view), Destination& d) {
  const size_t colon = rest.rfind(':');
  if (colon != std::string_view::npos && thread_shape(rest.substr(colon + 1))) {
    d.chat = std::string(rest.substr(0, colon));
    d.thread = std::string(rest.substr(colon + 1));
  } else {
    d.chat = std::string(rest);
  }
}

bool Digits(std::string_view s) { return AllOf(s, Digit); }

// Whether `rest` is an explicit id on `platform` (filled into `d`).
bool Explicit(std::string_view platform, std::string_view rest, Destination& d) {
  if (platform == "telegram") {
    SplitThread(rest, Digits, d);
    return IsTelegramChat(d.chat);
  }
  if (platform == "discord") {
    SplitThread(rest, Digits, d);
    return Digits(d.chat);
  }
  if (platform == "slack") {
    SplitThread(rest, IsSlackTs, d);
    return IsSlackId(d.chat);
  }
  d = Destination{std::string(rest), ""};
  if (platform == "matrix") return IsMatrixRoom(rest);
  if (platform == "signal") return IsSignalRecipient(rest);
  if (platform == "email") return IsEmail(rest);
  if (platform == "sms") return IsPhone(rest);
  if (platform == "ntfy") return rest.size() <= 64 && AllOf(rest, TopicChar);
  if (platform == "webhook") return rest.size() <= 200 && AllOf(rest, TopicChar);
  return false;
}

}  // namespace

Result<TargetRef> ParseTarget(std::string_view target) {
  target = Trim(target);
  if (target.empty()) return Err(InvalidArgumentError("target is empty"));
  const size_t colon = target.find(':');
  TargetRef ref;
  ref.platform = AsciiLower(Trim(target.substr(0, colon)));
  if (colon != std::string_view::npos) ref.rest = std::string(Trim(target.substr(colon + 1)));
  if (ref.platform.empty()) return Err(InvalidArgumentError("target names no platform"));
  return ref;
}

Result<Destination> ResolveTarget(const TargetRef& ref, const PlatformSettings& platform) {
  std::string_view rest = ref.rest;
  if (rest.empty()) {
    if (platform.home_channel.empty()) {
      std::string upper = platform.name;
      for (char& c : upper) c = static_cast<char>(c >= 'a' && c <= 'z' ? c - 'a' + 'A' : c);
      return Err(FailedPreconditionError(
          "no home channel for " + platform.name + ": name one in the target (" + platform.name +
          ":<id>), or set messaging." + platform.name + ".home_channel in config.yaml (or " +
          upper + "_HOME_CHANNEL)"));
    }
    rest = platform.home_channel;
  }
  // A configured name wins over an id shape ("#eng" or "eng").
  std::string_view name = rest;
  if (name.starts_with('#') && !(platform.name == "matrix" && IsMatrixRoom(name))) {
    name.remove_prefix(1);
  }
  for (const auto& [cname, id] : platform.channels) {
    if (cname == name) {
      Destination d;
      if (!Explicit(platform.name, id, d)) {
        std::string msg = "messaging." + platform.name;
        msg.append(".channels.").append(cname).append(" is not a ").append(platform.name);
        msg.append(" id: ").append(id);
        return Err(InvalidArgumentError(std::move(msg)));
      }
      return d;
    }
  }
  Destination d;
  if (Explicit(platform.name, rest, d)) return d;
  return Err(NotFoundError("Could not resolve '" + std::string(rest) + "' on " + platform.name +
                           ": not a " + platform.name +
                           " id and not a configured name; use action='list' to see the known "
                           "targets"));
}

}  // namespace talaria::messaging
