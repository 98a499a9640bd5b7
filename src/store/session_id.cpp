#include "store/session_id.h"

#include <chrono>
#include <cstdio>
#include <ctime>

#include "talaria/base/random.h"

namespace talaria::store {

std::string NewSessionId(int64_t unix_ms) {
  std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[64];  // room for any int the compiler thinks tm_year may hold
  std::snprintf(buf, sizeof(buf), "%04d%02d%02d_%02d%02d%02d_", tm.tm_year + 1900, tm.tm_mon + 1,
                tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec);
  return std::string(buf) + RandomHex(3);
}

int64_t NowUnixMs() {
  return std::chrono::duration_cast<std::chrono::milliseconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace talaria::store
