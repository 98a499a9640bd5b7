// One mapping of config.yaml, read key by key with errors that name the whole key
// ("config: terminal.ssh.port must be an integer from 1 to 65535"). An absent or null section
// reads as empty: every Read leaves its default in place.
// Thread-safety: immutable; reads are thread-safe while the Config lives.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/config.h"

namespace talaria {

class ConfigSection {
 public:
  // config.yaml's top-level `name`. InvalidArgument when present but not a mapping.
  static Result<ConfigSection> Of(const Config& config, std::string_view name);
  // The mapping `key` inside this section (same rules).
  Result<ConfigSection> Sub(std::string_view key) const;

  bool present() const { return json_ != nullptr; }

  // InvalidArgument "config: <section>.<key> must be <what>".
  Status Bad(std::string_view key, std::string_view what) const;

  Status ReadString(std::string_view key, std::string& out) const;
  Status ReadStrings(std::string_view key, std::vector<std::string>& out) const;
  Status ReadBool(std::string_view key, bool& out) const;
  // Left unset when the key is absent.
  Status ReadBool(std::string_view key, std::optional<bool>& out) const;
  // An integer from `min` to `max`.
  Status ReadInt(std::string_view key, int64_t min, int64_t max, int64_t& out) const;

 private:
  ConfigSection(const Json* json, std::string path) : json_(json), path_(std::move(path)) {}
  // Null when the key is absent or null.
  const Json* Find(std::string_view key) const;

  const Json* json_;  // borrowed from the Config; null: the section is absent
  std::string path_;  // "terminal", "terminal.ssh"
};

}  // namespace talaria
