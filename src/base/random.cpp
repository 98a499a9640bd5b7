#include "talaria/base/random.h"

#include <sys/random.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdint>
#include <random>

namespace talaria {
namespace {

void FillFallback(unsigned char* out, size_t n) {
  static std::atomic<uint64_t> counter{0};
  thread_local std::mt19937_64 gen(std::random_device{}() ^
                                   (static_cast<uint64_t>(::getpid()) << 32));
  for (size_t i = 0; i < n; i += 8) {
    const uint64_t v = gen() ^ counter.fetch_add(0x9e3779b97f4a7c15ULL);
    for (size_t k = 0; k < 8 && i + k < n; ++k)
      out[i + k] = static_cast<unsigned char>(v >> (8 * k));
  }
}

}  // namespace

std::string RandomHex(size_t bytes) {
  std::string raw(bytes, '\0');
  auto* buf = reinterpret_cast<unsigned char*>(raw.data());
  size_t got = 0;
  while (got < bytes) {
    const ssize_t n = ::getrandom(buf + got, bytes - got, GRND_NONBLOCK);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;  // EAGAIN (pool not ready), ENOSYS, EPERM: fall back below
    got += static_cast<size_t>(n);
  }
  if (got < bytes) FillFallback(buf + got, bytes - got);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(2 * bytes);
  for (unsigned char b : raw) {
    out += kHex[b >> 4];
    out += kHex[b & 15];
  }
  return out;
}

}  // namespace talaria
