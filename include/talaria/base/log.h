// Minimal leveled logging to stderr (stdout belongs to protocol output, e.g. MCP over stdio).
// The threshold comes from TALARIA_LOG (error|warn|info|debug; default warn), read once.
// Thread-safety: thread-safe; one write(2) per line, so lines never interleave.
#pragma once

#include <string_view>

namespace talaria {

enum class LogLevel : unsigned char { kError, kWarn, kInfo, kDebug };

bool LogEnabled(LogLevel level);
void Log(LogLevel level, std::string_view message);

inline void LogError(std::string_view m) { Log(LogLevel::kError, m); }
inline void LogWarn(std::string_view m) { Log(LogLevel::kWarn, m); }
inline void LogInfo(std::string_view m) { Log(LogLevel::kInfo, m); }

}  // namespace talaria
