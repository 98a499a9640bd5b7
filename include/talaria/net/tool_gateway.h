// The managed tool gateway (hermes-wave2 f.5): a vendor client (web search and extract through
// Firecrawl, image generation through FAL, browser sessions through Browser Use, sandboxes
// through Modal) may send its normal protocol to a gateway origin, authenticated with the user's
// gateway token instead of a vendor key.
//
//   auto gw = talaria::net::PickToolGateway("fal", /*have_direct_key=*/!fal_key.empty(),
//                                          talaria::net::GatewayPreference::kDirectFirst, stop);
//   if (!gw) return gw.error();          // neither a key nor a usable gateway
//   if (*gw) { origin = (*gw)->origin; headers.push_back((*gw)->auth_header); }
//   else     { origin = direct origin;  headers.push_back({"Authorization", "Key " + fal_key}); }
//
// Where things come from (the environment and one file; net reads no config.yaml, so every
// module that talks to a vendor, down to env-level ones, can use it):
//   token   TOOL_GATEWAY_USER_TOKEN (never refreshed), else the token file
//           TOOL_GATEWAY_TOKEN_FILE (default $TALARIA_HOME/auth/tool_gateway.json):
//             {"access_token": "...", "expires_at": "2026-12-06T01:00:00Z" (or epoch seconds),
//              "refresh_token": "...", "token_url": "https://.../oauth/token", "client_id": "..."}
//           (the original's auth.json shape, {"providers": {"nous": {...}}}, is read too).
//           A secret, so it lives in a 0600 file of its own, not in config.yaml.
//   refresh when fewer than 120 s are left: an OAuth 2 refresh_token grant POSTed (form) to
//           token_url; the answer's access_token, expires_in/expires_at and rotated
//           refresh_token are written back atomically (0600), under a lock file so that two
//           talaria processes do not spend one rotating refresh token twice.
//   origin  <VENDOR>_GATEWAY_URL (vendor upper-cased, '-' -> '_': FAL_GATEWAY_URL,
//           BROWSER_USE_GATEWAY_URL), else
//           {TOOL_GATEWAY_SCHEME|https}://<vendor>-gateway.{TOOL_GATEWAY_DOMAIN|nousresearch.com}
//   prefer  <VENDOR>_USE_GATEWAY=1 (or the caller's kGatewayFirst): use the gateway even when a
//           direct key is set.
//
// A direct vendor key is never discarded because the gateway is not usable (the original's
// #79628): PickToolGateway then answers "use your key".
// Thread-safety: thread-safe (the refresh is serialized within the process and across processes).
#pragma once

#include <chrono>
#include <optional>
#include <stop_token>
#include <string>
#include <string_view>
#include <utility>

#include "talaria/base/status.h"

namespace talaria::net {

struct ToolGateway {
  std::string vendor;  // "fal", "firecrawl", "browser-use", "modal", ...
  std::string origin;  // "https://fal-gateway.nousresearch.com", no trailing slash
  std::string token;   // valid for at least the refresh margin (or of unknown expiry)
  // The token as the vendor's own protocol carries a key: FAL "Authorization: Key <t>",
  // Browser Use "X-Browser-Use-API-Key: <t>", every other vendor "Authorization: Bearer <t>".
  std::pair<std::string, std::string> auth_header;
};

// The gateway for `vendor` with a fresh token (refreshing it first when it is about to expire).
// Errors: NotFound (no token configured: the message says what to set), InvalidArgument (a bad
// vendor name, <VENDOR>_GATEWAY_URL or TOOL_GATEWAY_SCHEME, a token file that is not the JSON
// above), FailedPrecondition (the token expired and cannot be refreshed), Unavailable (the
// refresh endpoint failed or refused; the message carries its status and error).
Result<ToolGateway> ResolveToolGateway(std::string_view vendor, const std::stop_token& stop = {});

// Whether a gateway token is configured for `vendor` (for check_fns and `talaria tools`):
// reads the environment and the token file; never refreshes, never touches the network. A token
// that expired with no way to refresh it counts as not configured.
bool ToolGatewayConfigured(std::string_view vendor);

enum class GatewayPreference : unsigned char {
  kDirectFirst,   // a direct key wins unless <VENDOR>_USE_GATEWAY=1
  kGatewayFirst,  // the gateway wins when it is usable (a caller's config said so)
};

// Which way a vendor client goes. nullopt: use the direct key. A gateway: use it.
// When `have_direct_key` and the gateway is not usable (not configured, refresh failed), the
// answer is nullopt: the key is never discarded. Errors (only without a direct key): as
// ResolveToolGateway.
Result<std::optional<ToolGateway>> PickToolGateway(std::string_view vendor, bool have_direct_key,
                                                   GatewayPreference preference,
                                                   const std::stop_token& stop = {});

// How long before expiry a token is refreshed.
inline constexpr std::chrono::seconds kGatewayRefreshMargin{120};

}  // namespace talaria::net
