#include "talaria/base/log.h"

#include <unistd.h>

#include <cstdlib>
#include <string>

namespace talaria {
namespace {

LogLevel ThresholdFromEnv() {
  const char* v = std::getenv("TALARIA_LOG");
  if (v == nullptr) return LogLevel::kWarn;
  std::string_view s(v);
  if (s == "error") return LogLevel::kError;
  if (s == "info") return LogLevel::kInfo;
  if (s == "debug") return LogLevel::kDebug;
  return LogLevel::kWarn;
}

std::string_view LevelName(LogLevel level) {
  switch (level) {
    case LogLevel::kError:
      return "error";
    case LogLevel::kWarn:
      return "warn";
    case LogLevel::kInfo:
      return "info";
    case LogLevel::kDebug:
      return "debug";
  }
  return "?";
}

}  // namespace

bool LogEnabled(LogLevel level) {
  static const LogLevel threshold = ThresholdFromEnv();
  return level <= threshold;
}

void Log(LogLevel level, std::string_view message) {
  if (!LogEnabled(level)) return;
  std::string line = "talaria ";
  line += LevelName(level);
  line += ": ";
  line += message;
  line += '\n';
  // A failed log write has nowhere to be reported.
  ssize_t ignored = ::write(STDERR_FILENO, line.data(), line.size());
  (void)ignored;
}

}  // namespace talaria
