// NetworkGuard (network_guard.h): the allow list, the name rules and the verdict over every
// resolved address.
#include "talaria/web/network_guard.h"

#include <algorithm>
#include <array>
#include <string>
#include <string_view>
#include <utility>

namespace talaria::web {
namespace {

// Cloud metadata services by name: never fetched, whatever the allow list says.
constexpr std::array<std::string_view, 7> kMetadataNames = {
    "metadata.google.internal",   "metadata.goog",           "metadata",           "instance-data",
    "instance-data.ec2.internal", "metadata.azure.internal", "metadata.packet.net"};

constexpr std::string_view kSecretRefusal =
    "Blocked: URL contains what appears to be an API key or token; secrets are not sent to web "
    "pages (rule: secret-in-url)";

bool IsLocalName(std::string_view host) {
  return host == "localhost" || host.ends_with(".localhost") || host == "localhost.localdomain" ||
         host == "ip6-localhost" || host == "ip6-loopback";
}

Status Refuse(const WebUrl& url, std::string_view why, std::string_view rule) {
  std::string m(kGuardRefusal);
  m += url.origin();
  m += " refused: ";
  m += why;
  m += " (rule: ";
  m += rule;
  m += ")";
  if (rule != "cloud-metadata") {
    m += "; to reach it on purpose, add \"" +
         (url.ip && url.ip->v6 ? "[" + url.host + "]" : url.host) + ":" + std::to_string(url.port) +
         "\" or a CIDR to web.allow_private in config.yaml";
  }
  return PermissionDeniedError(std::move(m));
}

bool InCidr(const IpAddress& a, const IpAddress& base, int bits) {
  if (a.v6 != base.v6) return false;
  for (int i = 0; i < bits / 8; ++i) {
    if (a.bytes[static_cast<size_t>(i)] != base.bytes[static_cast<size_t>(i)]) return false;
  }
  const int rem = bits % 8;
  if (rem == 0) return true;
  const auto mask = static_cast<uint8_t>(0xFF << (8 - rem));
  const auto i = static_cast<size_t>(bits / 8);
  return (a.bytes[i] & mask) == (base.bytes[i] & mask);
}

}  // namespace

std::vector<std::string> Admitted::PinList() const {
  std::vector<std::string> out;
  out.reserve(addresses.size());
  for (const IpAddress& a : addresses) out.push_back(a.ToString());
  return out;
}

Result<std::shared_ptr<const NetworkGuard>> NetworkGuard::Create(GuardOptions options) {
  std::shared_ptr<NetworkGuard> g(new NetworkGuard());
  g->resolver_ = options.resolver ? std::move(options.resolver) : SystemResolver();
  for (const std::string& entry : options.allow_private) {
    const auto bad = [&](std::string_view why) {
      return InvalidArgumentError("config: web.allow_private entry '" + entry + "' " +
                                  std::string(why) +
                                  " (want host:port, [v6]:port or a CIDR such as 10.0.0.0/8)");
    };
    const size_t slash = entry.find('/');
    if (slash != std::string::npos) {
      const std::optional<IpAddress> base = ParseIpLiteral(entry.substr(0, slash));
      const std::string bits_text = entry.substr(slash + 1);
      if (!base || bits_text.empty() || bits_text.size() > 3 ||
          !std::all_of(bits_text.begin(), bits_text.end(),
                       [](char c) { return c >= '0' && c <= '9'; })) {
        return Err(bad("is not a CIDR"));
      }
      const int bits = std::stoi(bits_text);
      if (bits > (base->v6 ? 128 : 32)) return Err(bad("has a prefix longer than the address"));
      g->allow_cidrs_.push_back({*base, bits});
      continue;
    }
    // host:port, parsed the way a URL's authority is.
    auto parsed = ParseWebUrl("http://" + entry + "/");
    if (!parsed || entry.find(':') == std::string::npos || entry.back() == ']') {
      return Err(bad("is not host:port or a CIDR"));
    }
    g->allow_hosts_.push_back({parsed->host, parsed->port});
  }
  return std::shared_ptr<const NetworkGuard>(std::move(g));
}

bool NetworkGuard::Allowed(const WebUrl& url, const IpAddress& address) const {
  for (const HostPort& hp : allow_hosts_) {
    if (hp.host == url.host && hp.port == url.port) return true;
  }
  for (const Cidr& c : allow_cidrs_) {
    if (InCidr(address, c.base, c.bits)) return true;
  }
  return false;
}

std::optional<std::string_view> NetworkGuard::Judge(const WebUrl& url,
                                                    const IpAddress& address) const {
  const std::optional<std::string_view> rule = BlockedRule(address);
  if (!rule || *rule == "cloud-metadata") return rule;
  if (Allowed(url, address)) return std::nullopt;
  return rule;
}

Result<WebUrl> NetworkGuard::Check(std::string_view url) const {
  if (UrlCarriesSecret(url)) {
    // Built piece by piece: GCC 12 warns (array-bounds) on one long concatenation here.
    std::string m(kGuardRefusal);
    m.append(kSecretRefusal);
    return Err(PermissionDeniedError(std::move(m)));
  }
  WebUrl u = TALARIA_TRY(ParseWebUrl(url));
  if (u.ip) {
    if (auto rule = Judge(u, *u.ip)) {
      return Err(Refuse(u, u.host + " is " + std::string(*rule), *rule));
    }
    return u;
  }
  if (std::find(kMetadataNames.begin(), kMetadataNames.end(), u.host) != kMetadataNames.end()) {
    return Err(Refuse(u, u.host + " is a cloud metadata service", "cloud-metadata"));
  }
  if (IsLocalName(u.host)) {
    bool allowed = false;
    for (const HostPort& hp : allow_hosts_) allowed |= hp.host == u.host && hp.port == u.port;
    if (!allowed) return Err(Refuse(u, u.host + " names this machine", "loopback"));
  }
  return u;
}

Result<Admitted> NetworkGuard::Admit(std::string_view url, const std::stop_token& stop) const {
  Admitted out;
  out.url = TALARIA_TRY(Check(url));
  if (out.url.ip) {
    out.addresses.push_back(*out.url.ip);
    return out;
  }
  out.addresses = TALARIA_TRY(resolver_->Resolve(out.url.host, stop));
  if (out.addresses.empty()) {
    return Err(UnavailableError(out.url.origin() + ": the name has no address"));
  }
  for (const IpAddress& a : out.addresses) {
    if (auto rule = Judge(out.url, a)) {
      return Err(
          Refuse(out.url,
                 out.url.host + " resolves to " + a.ToString() + ", which is " + std::string(*rule),
                 *rule));
    }
  }
  return out;
}

std::string RefusalRule(const Status& status) {
  const std::string& m = status.message();
  if (status.code() != StatusCode::kPermissionDenied || !m.starts_with(kGuardRefusal)) return "";
  const size_t at = m.find("(rule: ");
  if (at == std::string::npos) return "";
  const size_t end = m.find(')', at);
  return m.substr(at + 7, end == std::string::npos ? std::string::npos : end - at - 7);
}

}  // namespace talaria::web
