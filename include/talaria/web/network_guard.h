// The network guard: which URLs talaria's own fetches (web_extract, later the browser tools) may
// reach. Judged where it cannot be raced: talaria resolves the name itself, judges every address
// it got, and the connection is then pinned to those addresses (HttpRequest::pinned_addresses),
// so a resolver that answers "public" to the check and "127.0.0.1" to the connect (rebinding)
// gains nothing. Each redirect hop comes back here (the fetcher follows redirects itself).
//
//   auto guard = talaria::web::NetworkGuard::Create({.allow_private = {"127.0.0.1:8080"}});
//   auto admitted = guard->Admit("https://example.org/a", stop);   // resolves, judges
//   if (!admitted) ... admitted.error() names the rule: "network guard: ... (rule: loopback)"
//
// Refused unless allowed: loopback, private, link-local, CGNAT, benchmark, multicast, reserved
// and unspecified addresses, in every spelling (IPv4 in decimal, hex, octal and short forms;
// IPv6 IPv4-mapped, IPv4-compatible, NAT64, 6to4, Teredo and ISATAP forms judged by the IPv4
// address inside; zone ids); `localhost` names. Refused always: cloud metadata names and
// addresses, user info in the URL, schemes other than http and https, a URL that carries what
// looks like an API key or token.
// Thread-safety: NetworkGuard is immutable after Create; thread-safe if its Resolver is.
#pragma once

#include <array>
#include <cstdint>
#include <memory>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::web {

struct IpAddress {
  bool v6 = false;
  std::array<uint8_t, 16> bytes{};  // IPv4: the first 4 bytes

  static IpAddress V4(uint32_t host_order);
  uint32_t v4() const;  // host order; REQUIRES !v6
  // The canonical text (inet_ntop): what a pin and an error message use.
  std::string ToString() const;
  bool operator==(const IpAddress&) const = default;
};

// `host` (as it appears in a URL's authority, brackets allowed) as an IP address, in every
// spelling the C library's resolver or a browser would take as one: IPv4 with 1 to 4 parts, each
// decimal, hex (0x) or octal (leading 0), and a trailing dot; IPv6 with or without brackets and
// with a zone id ("%25eth0" or "%eth0", dropped). nullopt: not an IP literal.
std::optional<IpAddress> ParseIpLiteral(std::string_view host);

// Whether `host` looks numeric (its last label starts with a digit, or is 0x...) without being
// a valid IPv4 literal: such a host is refused rather than handed to a resolver that may read
// it differently.
bool IsAmbiguousNumericHost(std::string_view host);

// The rule that refuses `address`, or nullopt for a public unicast address. Transition forms
// are judged by the IPv4 address they carry. Rules: "unspecified", "loopback", "private",
// "link-local", "cgnat", "benchmark", "multicast", "reserved", "cloud-metadata".
std::optional<std::string_view> BlockedRule(const IpAddress& address);

// An absolute http(s) URL split as the guard and the pin need it.
struct WebUrl {
  std::string scheme;  // "http" or "https", lower case
  std::string host;    // lower case, no trailing dot, no brackets, no zone id
  int port = 0;        // explicit or the scheme's default
  bool host_is_ip = false;
  std::optional<IpAddress> ip;  // when host_is_ip
  // The URL rebuilt from the parts above (canonical host, explicit port, no fragment): what is
  // handed to libcurl, so that it cannot read the host differently from the guard.
  std::string normalized;
  std::string origin() const;  // scheme://host:port, what messages name
};

// Parses and judges the syntax of `url`: InvalidArgument for what is not an absolute http(s)
// URL; PermissionDenied (with the rule) for user info, a zone id, a backslash or control byte
// in the authority, a non-ASCII or ambiguous numeric host.
Result<WebUrl> ParseWebUrl(std::string_view url);

// True when `url` (raw, percent-decoded once or twice) contains what looks like an API key or
// token (the patterns of the secret redactor).
bool UrlCarriesSecret(std::string_view url);

// Name resolution, replaceable for tests (a rebinding resolver) and the fetcher's own use.
class Resolver {
 public:
  virtual ~Resolver() = default;
  // Every address of `host` (IPv4 and IPv6). Unavailable when it does not resolve.
  virtual Result<std::vector<IpAddress>> Resolve(const std::string& host,
                                                 const std::stop_token& stop) = 0;
};

// getaddrinfo, run so that a stop request is not stuck behind a slow DNS server.
std::shared_ptr<Resolver> SystemResolver();

struct GuardOptions {
  // config web.allow_private: "host:port" (that host and port may be private; IPv6 hosts in
  // brackets) or a CIDR ("10.1.0.0/16", "fd00::/8": addresses inside may be reached on any
  // port). Cloud metadata stays refused.
  std::vector<std::string> allow_private;
  std::shared_ptr<Resolver> resolver;  // null: SystemResolver()
};

// What the guard admitted: the URL and the addresses the connection must be pinned to.
struct Admitted {
  WebUrl url;
  std::vector<IpAddress> addresses;  // every one judged; empty never
  // A pin list for HttpRequest::pinned_addresses.
  std::vector<std::string> PinList() const;
};

class NetworkGuard {
 public:
  // InvalidArgument naming the entry for an allow_private entry that does not parse.
  static Result<std::shared_ptr<const NetworkGuard>> Create(GuardOptions options);

  // Everything that needs no resolution: the URL's syntax and scheme, secrets, user info,
  // metadata and local names, and an IP literal host. The fast path (no allocation beyond the
  // WebUrl).
  Result<WebUrl> Check(std::string_view url) const;
  // Check, then resolve a host name and judge every address (one refused address refuses the
  // URL: a resolver that mixes in 127.0.0.1 is not trusted with the rest).
  Result<Admitted> Admit(std::string_view url, const std::stop_token& stop = {}) const;

  // The rule that refuses `address` reached as `url`, considering the allow list; nullopt: ok.
  std::optional<std::string_view> Judge(const WebUrl& url, const IpAddress& address) const;

 private:
  struct Cidr {
    IpAddress base;
    int bits = 0;
  };
  struct HostPort {
    std::string host;
    int port = 0;
  };
  NetworkGuard() = default;
  bool Allowed(const WebUrl& url, const IpAddress& address) const;

  std::vector<Cidr> allow_cidrs_;
  std::vector<HostPort> allow_hosts_;
  std::shared_ptr<Resolver> resolver_;
};

// The error text's prefix for every refusal ("network guard: ... (rule: loopback)"), so callers
// can tell a refusal from a failure to connect.
inline constexpr std::string_view kGuardRefusal = "network guard: ";
// The rule named in a refusal's message, or "" when `status` is not a refusal.
std::string RefusalRule(const Status& status);

}  // namespace talaria::web
