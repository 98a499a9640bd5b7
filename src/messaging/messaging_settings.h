// The platforms send_message can reach: config.yaml's `messaging` section for what is not
// secret, the environment (the original's variable names) for tokens and passwords.
//
//   messaging:
//     slack:
//       home_channel: C0123ABCD          # where `slack` alone sends (env SLACK_HOME_CHANNEL)
//       channels: {eng: C0456EFGH}       # names for `slack:#eng` and action=list
//       base_url: https://slack.com/api  # a proxy or a test's fake
//       enabled: false                   # off although its token is set
//     telegram: {home_channel: "-1001234567890"}
//     matrix: {homeserver: https://matrix.example.org, home_channel: "!abc:example.org"}
//     signal: {url: http://127.0.0.1:8080, account: "+15550001111"}
//     email: {smtp_url: smtp://smtp.example.org:587, from: bot@example.org, allow_plaintext: false}
//     sms: {from: "+15550002222"}
//     ntfy: {server: https://ntfy.sh, home_channel: my-topic}
//     webhook: {url: https://hooks.example.org/talaria}
//
// Secrets (environment only): SLACK_BOT_TOKEN, TELEGRAM_BOT_TOKEN, DISCORD_BOT_TOKEN,
// MATRIX_ACCESS_TOKEN, EMAIL_PASSWORD, TWILIO_AUTH_TOKEN, NTFY_TOKEN, MESSAGING_WEBHOOK_TOKEN.
// Non-secret keys may also come from the environment (the original's .env): MATRIX_HOMESERVER,
// SIGNAL_HTTP_URL, SIGNAL_ACCOUNT, EMAIL_ADDRESS, EMAIL_SMTP_HOST, EMAIL_SMTP_PORT,
// TWILIO_ACCOUNT_SID, TWILIO_PHONE_NUMBER, NTFY_SERVER, MESSAGING_WEBHOOK_URL and
// <PLATFORM>_HOME_CHANNEL; config.yaml wins over them.
// Thread-safety: value types; LoadMessagingSettings reads the process's config (ToolCallConfig)
// and the environment each call.
#pragma once

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria::messaging {

struct PlatformSettings {
  std::string name;      // "slack", "telegram", ...
  bool enabled = false;  // everything it needs is present
  std::string missing;   // when not enabled: what to set
  std::string home_channel;
  std::vector<std::pair<std::string, std::string>> channels;  // name -> id, in config order
  std::string base_url;          // the API's origin (and path prefix), no trailing slash
  std::string token;             // the bearer/bot token or password (never printed)
  std::string account;           // signal: the sending number; sms: the Twilio account SID
  std::string from;              // email/sms: the sender
  std::string username;          // email: the SMTP login
  bool allow_plaintext = false;  // email: smtp:// without STARTTLS (a local relay)
};

struct MessagingSettings {
  std::vector<PlatformSettings> platforms;  // every known platform, enabled or not
  const PlatformSettings* Find(std::string_view name) const;
  bool AnyEnabled() const;
};

// The platforms send_message knows, in the order `list` shows them.
const std::vector<std::string_view>& KnownPlatforms();

// InvalidArgument "config: messaging.<platform>.<key> must be ..." for a malformed section.
Result<MessagingSettings> MessagingSettingsFromConfig(const Config& config);
// The messaging section of the config the process loaded (ToolCallConfig) plus the environment.
Result<MessagingSettings> LoadMessagingSettings();

}  // namespace talaria::messaging
