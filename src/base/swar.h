// Word-at-a-time byte tests (SWAR: eight bytes per step instead of one) for base's text scanners:
// file contents and JSON texts are mostly long runs of ASCII that need no per-byte decision, and
// the escaping, validating and UTF-8 passes over every MCP answer were byte loops.
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>

namespace talaria::swar {

inline constexpr uint64_t kOnes = 0x0101010101010101ULL;
inline constexpr uint64_t kHighs = 0x8080808080808080ULL;

inline uint64_t Load8(const char* p) {
  uint64_t v;
  std::memcpy(&v, p, sizeof v);
  return v;
}

// Nonzero iff some byte of `v` is below `n` (n <= 128). Only whether is exact: bits above the
// first such byte may be set spuriously.
inline uint64_t AnyByteBelow(uint64_t v, unsigned char n) { return (v - kOnes * n) & ~v & kHighs; }

// Nonzero iff some byte of `v` equals `c` (same caveat).
inline uint64_t AnyByteIs(uint64_t v, unsigned char c) { return AnyByteBelow(v ^ (kOnes * c), 1); }

// The number of leading bytes of p[0, n) below 0x80.
inline size_t AsciiRun(const char* p, size_t n) {
  size_t i = 0;
  while (i + 8 <= n && (Load8(p + i) & kHighs) == 0) i += 8;
  while (i < n && static_cast<unsigned char>(p[i]) < 0x80) ++i;
  return i;
}

// Whether a JSON string carries byte `c` as it is, with no escape and no UTF-8 check: printable
// ASCII other than '"' and '\\'.
inline bool IsPlainJsonByte(unsigned char c) {
  return c >= 0x20 && c < 0x80 && c != '"' && c != '\\';
}

// The number of leading bytes of p[0, n) for which IsPlainJsonByte holds.
inline size_t PlainJsonRun(const char* p, size_t n) {
  size_t i = 0;
  while (i + 8 <= n) {
    const uint64_t v = Load8(p + i);
    if ((AnyByteBelow(v, 0x20) | AnyByteIs(v, '"') | AnyByteIs(v, '\\') | (v & kHighs)) != 0) break;
    i += 8;
  }
  while (i < n && IsPlainJsonByte(static_cast<unsigned char>(p[i]))) ++i;
  return i;
}

}  // namespace talaria::swar
