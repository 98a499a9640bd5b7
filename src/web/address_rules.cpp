// Which addresses the network guard refuses (network_guard.h BlockedRule). IPv6 transition
// forms carry an IPv4 address the packet ends up at; they are judged by that address, so
// "[::ffff:127.0.0.1]", "[64:ff9b::7f00:1]" and "[2002:7f00:1::]" are loopback like 127.0.0.1.
#include <cstdint>
#include <optional>
#include <string_view>

#include "talaria/web/network_guard.h"

namespace talaria::web {
namespace {

bool InV4(uint32_t a, uint32_t base, int bits) {
  const uint32_t mask = bits == 0 ? 0 : ~uint32_t{0} << (32 - bits);
  return (a & mask) == (base & mask);
}

constexpr uint32_t Ip4(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return (a << 24) | (b << 16) | (c << 8) | d;
}

std::optional<std::string_view> BlockedV4(uint32_t a) {
  // The metadata services first: they sit inside ranges an allow list might open.
  if (a == Ip4(169, 254, 169, 254) || a == Ip4(169, 254, 170, 2) || a == Ip4(169, 254, 169, 253) ||
      a == Ip4(100, 100, 100, 200)) {
    return "cloud-metadata";
  }
  if (InV4(a, Ip4(0, 0, 0, 0), 8)) return "unspecified";
  if (InV4(a, Ip4(127, 0, 0, 0), 8)) return "loopback";
  if (InV4(a, Ip4(10, 0, 0, 0), 8) || InV4(a, Ip4(172, 16, 0, 0), 12) ||
      InV4(a, Ip4(192, 168, 0, 0), 16)) {
    return "private";
  }
  if (InV4(a, Ip4(169, 254, 0, 0), 16)) return "link-local";
  if (InV4(a, Ip4(100, 64, 0, 0), 10)) return "cgnat";
  if (InV4(a, Ip4(198, 18, 0, 0), 15)) return "benchmark";
  if (InV4(a, Ip4(224, 0, 0, 0), 4)) return "multicast";
  if (InV4(a, Ip4(240, 0, 0, 0), 4) ||      // future use and 255.255.255.255
      InV4(a, Ip4(192, 0, 0, 0), 24) ||     // IETF protocol assignments
      InV4(a, Ip4(192, 0, 2, 0), 24) ||     // documentation
      InV4(a, Ip4(198, 51, 100, 0), 24) ||  // documentation
      InV4(a, Ip4(203, 0, 113, 0), 24) ||   // documentation
      InV4(a, Ip4(192, 88, 99, 0), 24)) {   // 6to4 relay anycast
    return "reserved";
  }
  return std::nullopt;
}

uint32_t Word32(const IpAddress& a, size_t byte) {
  return (uint32_t{a.bytes[byte]} << 24) | (uint32_t{a.bytes[byte + 1]} << 16) |
         (uint32_t{a.bytes[byte + 2]} << 8) | uint32_t{a.bytes[byte + 3]};
}

bool Prefix(const IpAddress& a, std::initializer_list<uint8_t> bytes, int bits) {
  int i = 0;
  for (uint8_t b : bytes) {
    const int take = bits - 8 * i;
    if (take <= 0) break;
    const uint8_t mask = take >= 8 ? 0xFF : static_cast<uint8_t>(0xFF << (8 - take));
    if ((a.bytes[static_cast<size_t>(i)] & mask) != (b & mask)) return false;
    ++i;
  }
  return true;
}

bool AllZero(const IpAddress& a, size_t from, size_t to) {
  for (size_t i = from; i < to; ++i) {
    if (a.bytes[i] != 0) return false;
  }
  return true;
}

std::optional<std::string_view> BlockedV6(const IpAddress& a) {
  // fd00:ec2::254, AWS's metadata service over IPv6.
  static const std::optional<IpAddress> kAwsV6 = ParseIpLiteral("fd00:ec2::254");
  if (kAwsV6 && a == *kAwsV6) return "cloud-metadata";
  if (AllZero(a, 0, 16)) return "unspecified";
  if (AllZero(a, 0, 15) && a.bytes[15] == 1) return "loopback";
  // ::ffff:a.b.c.d (IPv4-mapped) and ::a.b.c.d (IPv4-compatible, deprecated).
  if (AllZero(a, 0, 10) &&
      ((a.bytes[10] == 0xFF && a.bytes[11] == 0xFF) || (a.bytes[10] == 0 && a.bytes[11] == 0))) {
    return BlockedV4(Word32(a, 12));
  }
  // ::ffff:0:a.b.c.d (SIIT, IPv4-translated).
  if (AllZero(a, 0, 8) && a.bytes[8] == 0xFF && a.bytes[9] == 0xFF && a.bytes[10] == 0 &&
      a.bytes[11] == 0) {
    return BlockedV4(Word32(a, 12));
  }
  // 64:ff9b::/96 (NAT64 well-known prefix): the IPv4 address in the last 32 bits.
  if (Prefix(a, {0x00, 0x64, 0xFF, 0x9B}, 32) && AllZero(a, 4, 12)) {
    return BlockedV4(Word32(a, 12));
  }
  // 64:ff9b:1::/48: local-use NAT64 (RFC 8215), a network's own translator.
  if (Prefix(a, {0x00, 0x64, 0xFF, 0x9B, 0x00, 0x01}, 48)) return "private";
  // 2002::/16 (6to4): the IPv4 address in bits 16 to 48.
  if (Prefix(a, {0x20, 0x02}, 16)) {
    if (auto rule = BlockedV4(Word32(a, 2))) return rule;
  }
  // 2001:2::/48: benchmarking.
  if (Prefix(a, {0x20, 0x01, 0x00, 0x02, 0x00, 0x00}, 48)) return "benchmark";
  // 2001::/32 (Teredo): the server in bits 32 to 64, the client inverted in the last 32 bits.
  if (Prefix(a, {0x20, 0x01, 0x00, 0x00}, 32)) {
    if (auto rule = BlockedV4(Word32(a, 4))) return rule;
    if (auto rule = BlockedV4(~Word32(a, 12))) return rule;
  }
  // 2001:db8::/32: documentation.
  if (Prefix(a, {0x20, 0x01, 0x0D, 0xB8}, 32)) return "reserved";
  // ISATAP interface identifiers (::0:5efe:a.b.c.d, ::200:5efe:a.b.c.d) under any prefix.
  if ((a.bytes[8] == 0x00 || a.bytes[8] == 0x02) && a.bytes[9] == 0x00 && a.bytes[10] == 0x5E &&
      a.bytes[11] == 0xFE) {
    if (auto rule = BlockedV4(Word32(a, 12))) return rule;
  }
  if (a.bytes[0] == 0xFF) return "multicast";
  if (Prefix(a, {0xFE, 0x80}, 10)) return "link-local";
  if (Prefix(a, {0xFE, 0xC0}, 10) || Prefix(a, {0xFC}, 7)) return "private";
  // Global unicast is 2000::/3; everything else left (discard 100::/64, unassigned) is not a
  // place a web page lives.
  if (!Prefix(a, {0x20}, 3)) return "reserved";
  return std::nullopt;
}

}  // namespace

std::optional<std::string_view> BlockedRule(const IpAddress& address) {
  return address.v6 ? BlockedV6(address) : BlockedV4(address.v4());
}

}  // namespace talaria::web
