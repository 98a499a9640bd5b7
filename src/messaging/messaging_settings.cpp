// The messaging section and its environment (messaging_settings.h).
#include "messaging/messaging_settings.h"

#include <cstdlib>
#include <optional>
#include <string>

#include <nlohmann/json.hpp>

#include "talaria/core/runtime.h"

namespace talaria::messaging {
namespace {

[[maybe_unused]] const bool kSectionDeclared = (DeclareConfigSection("messaging"), true);

std::string Env(const std::string& name) {
  const char* v = std::getenv(name.c_str());  // NOLINT(concurrency-mt-unsafe): read-only use
  return v == nullptr ? "" : v;
}

Status Bad(std::string_view platform, std::string_view key, std::string_view what) {
  return InvalidArgumentError("config: messaging." + std::string(platform) + "." +
                              std::string(key) + " must be " + std::string(what));
}

std::string Upper(std::string_view s) {
  std::string out(s);
  for (char& c : out) {
    if (c >= 'a' && c <= 'z') c = static_cast<char>(c - 'a' + 'A');
  }
  return out;
}

// The keys each platform reads from config.yaml besides the common ones.
bool IsKnownKey(std::string_view platform, std::string_view key) {
  if (key == "home_channel" || key == "channels" || key == "base_url" || key == "enabled") {
    return true;
  }
  if (platform == "matrix") return key == "homeserver";
  if (platform == "signal") return key == "url" || key == "account";
  if (platform == "email") {
    return key == "smtp_url" || key == "from" || key == "username" || key == "allow_plaintext";
  }
  if (platform == "sms") return key == "from" || key == "account_sid";
  if (platform == "ntfy") return key == "server";
  if (platform == "webhook") return key == "url";
  return false;
}

Status ReadPlatform(std::string_view name, const Json* section, PlatformSettings& p,
                    bool& configured, std::optional<bool>& enabled, std::string& extra_url) {
  if (section == nullptr || section->is_null()) return Status::Ok();
  if (!section->is_object()) {
    return InvalidArgumentError("config: messaging." + std::string(name) + " must be a mapping");
  }
  configured = true;
  for (const auto& [key, value] : section->items()) {
    if (!IsKnownKey(name, key)) {
      return InvalidArgumentError("config: messaging." + std::string(name) + "." + key +
                                  " is not a setting");
    }
    if (key == "channels") {
      if (!value.is_object()) return Bad(name, key, "a mapping of names to ids");
      for (const auto& [cname, id] : value.items()) {
        if (!id.is_string() && !id.is_number_integer()) {
          return Bad(name, key + "." + cname, "a string id");
        }
        p.channels.emplace_back(cname, id.is_string() ? id.get<std::string>() : id.dump());
      }
    } else if (key == "enabled" || key == "allow_plaintext") {
      if (!value.is_boolean()) return Bad(name, key, "true or false");
      if (key == "enabled") {
        enabled = value.get<bool>();
      } else {
        p.allow_plaintext = value.get<bool>();
      }
    } else {
      // Ids may be written as numbers (a Telegram chat id); keep their digits.
      if (!value.is_string() && !value.is_number_integer()) return Bad(name, key, "a string");
      std::string v = value.is_string() ? value.get<std::string>() : value.dump();
      if (key == "home_channel") {
        p.home_channel = v;
      } else if (key == "base_url") {
        p.base_url = v;
      } else if (key == "from") {
        p.from = v;
      } else if (key == "username") {
        p.username = v;
      } else if (key == "account" || key == "account_sid") {
        p.account = v;
      } else {
        extra_url = v;  // homeserver, url, smtp_url, server
      }
    }
  }
  return Status::Ok();
}

std::string Or(std::string a, const std::string& b) { return a.empty() ? b : a; }

void StripSlashes(std::string& url) {
  while (!url.empty() && url.back() == '/') url.pop_back();
}

}  // namespace

const std::vector<std::string_view>& KnownPlatforms() {
  static const std::vector<std::string_view> kPlatforms = {
      "slack", "telegram", "discord", "matrix", "signal", "email", "sms", "ntfy", "webhook"};
  return kPlatforms;
}

const PlatformSettings* MessagingSettings::Find(std::string_view name) const {
  for (const PlatformSettings& p : platforms) {
    if (p.name == name) return &p;
  }
  return nullptr;
}

bool MessagingSettings::AnyEnabled() const {
  for (const PlatformSettings& p : platforms) {
    if (p.enabled) return true;
  }
  return false;
}

Result<MessagingSettings> MessagingSettingsFromConfig(const Config& config) {
  const Json* section = nullptr;
  if (config.raw && config.raw->is_object()) {
    auto it = config.raw->find("messaging");
    if (it != config.raw->end() && !it->is_null()) {
      if (!it->is_object()) return Err(InvalidArgumentError("config: messaging must be a mapping"));
      section = &*it;
    }
  }
  if (section != nullptr) {
    for (const auto& [key, value] : section->items()) {
      bool known = false;
      for (std::string_view p : KnownPlatforms()) known = known || p == key;
      if (!known) {
        return Err(InvalidArgumentError("config: messaging." + key +
                                        " is not a platform (slack, telegram, discord, matrix, "
                                        "signal, email, sms, ntfy, webhook)"));
      }
    }
  }
  MessagingSettings out;
  for (std::string_view name : KnownPlatforms()) {
    PlatformSettings p;
    p.name = std::string(name);
    bool configured = false;
    std::optional<bool> enabled;
    std::string url;
    const Json* mine = nullptr;
    if (section != nullptr) {
      auto it = section->find(name);
      if (it != section->end()) mine = &*it;
    }
    TALARIA_RETURN_IF_ERROR(ReadPlatform(name, mine, p, configured, enabled, url));
    const std::string upper = Upper(name);
    p.home_channel = Or(p.home_channel, Env(upper + "_HOME_CHANNEL"));
    if (name == "slack") {
      p.token = Env("SLACK_BOT_TOKEN");
      p.base_url = Or(p.base_url, "https://slack.com/api");
      p.missing = p.token.empty() ? "SLACK_BOT_TOKEN" : "";
    } else if (name == "telegram") {
      p.token = Env("TELEGRAM_BOT_TOKEN");
      p.base_url = Or(p.base_url, "https://api.telegram.org");
      p.missing = p.token.empty() ? "TELEGRAM_BOT_TOKEN" : "";
    } else if (name == "discord") {
      p.token = Env("DISCORD_BOT_TOKEN");
      p.base_url = Or(p.base_url, "https://discord.com/api/v10");
      p.missing = p.token.empty() ? "DISCORD_BOT_TOKEN" : "";
    } else if (name == "matrix") {
      p.token = Env("MATRIX_ACCESS_TOKEN");
      p.base_url = Or(p.base_url, Or(url, Env("MATRIX_HOMESERVER")));
      p.home_channel = Or(p.home_channel, Env("MATRIX_HOME_ROOM"));
      if (p.token.empty()) p.missing = "MATRIX_ACCESS_TOKEN";
      if (p.base_url.empty())
        p.missing += std::string(p.missing.empty() ? "" : " and ") +
                     "MATRIX_HOMESERVER (or messaging.matrix.homeserver)";
    } else if (name == "signal") {
      p.base_url = Or(p.base_url, Or(url, Env("SIGNAL_HTTP_URL")));
      p.account = Or(p.account, Env("SIGNAL_ACCOUNT"));
      if (p.base_url.empty()) p.missing = "SIGNAL_HTTP_URL (signal-cli's HTTP daemon)";
      if (p.account.empty())
        p.missing += std::string(p.missing.empty() ? "" : " and ") + "SIGNAL_ACCOUNT";
    } else if (name == "email") {
      p.token = Env("EMAIL_PASSWORD");
      p.from = Or(p.from, Env("EMAIL_ADDRESS"));
      p.username = Or(p.username, p.from);
      p.home_channel = Or(p.home_channel, Env("EMAIL_HOME_ADDRESS"));
      std::string smtp = Or(url, p.base_url);
      if (smtp.empty() && !Env("EMAIL_SMTP_HOST").empty()) {
        const std::string port = Or(Env("EMAIL_SMTP_PORT"), "587");
        smtp = (port == "465" ? "smtps://" : "smtp://") + Env("EMAIL_SMTP_HOST") + ":" + port;
      }
      p.base_url = smtp;
      if (p.base_url.empty()) p.missing = "EMAIL_SMTP_HOST (or messaging.email.smtp_url)";
      if (p.from.empty())
        p.missing += std::string(p.missing.empty() ? "" : " and ") + "EMAIL_ADDRESS";
    } else if (name == "sms") {
      p.token = Env("TWILIO_AUTH_TOKEN");
      p.account = Or(p.account, Env("TWILIO_ACCOUNT_SID"));
      p.from = Or(p.from, Env("TWILIO_PHONE_NUMBER"));
      p.base_url = Or(p.base_url, "https://api.twilio.com");
      std::string miss;
      for (auto [v, n] :
           {std::pair{&p.account, "TWILIO_ACCOUNT_SID"}, std::pair{&p.token, "TWILIO_AUTH_TOKEN"},
            std::pair{&p.from, "TWILIO_PHONE_NUMBER"}}) {
        if (v->empty()) miss += std::string(miss.empty() ? "" : ", ") + n;
      }
      p.missing = miss;
    } else if (name == "ntfy") {
      p.token = Env("NTFY_TOKEN");
      const std::string env_server = Env("NTFY_SERVER");
      p.base_url = Or(p.base_url, Or(url, Or(env_server, "https://ntfy.sh")));
      // ntfy needs no credentials: it is on when it is configured at all.
      if (!configured && env_server.empty() && p.home_channel.empty()) {
        p.missing = "a messaging.ntfy section (or NTFY_SERVER / NTFY_HOME_CHANNEL)";
      }
    } else if (name == "webhook") {
      p.token = Env("MESSAGING_WEBHOOK_TOKEN");
      p.base_url = Or(p.base_url, Or(url, Env("MESSAGING_WEBHOOK_URL")));
      if (p.base_url.empty()) p.missing = "MESSAGING_WEBHOOK_URL (or messaging.webhook.url)";
    }
    StripSlashes(p.base_url);
    p.enabled = p.missing.empty();
    if (enabled.has_value() && !*enabled) {
      p.enabled = false;
      p.missing = "messaging." + p.name + ".enabled is false";
    }
    out.platforms.push_back(std::move(p));
  }
  return out;
}

Result<MessagingSettings> LoadMessagingSettings() {
  const std::shared_ptr<const Config> config = TALARIA_TRY(ToolCallConfig());
  return MessagingSettingsFromConfig(*config);
}

}  // namespace talaria::messaging
