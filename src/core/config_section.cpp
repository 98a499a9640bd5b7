#include "talaria/core/config_section.h"

#include <nlohmann/json.hpp>

namespace talaria {
namespace {

Result<const Json*> MappingAt(const Json* parent, std::string_view key, const std::string& path) {
  if (parent == nullptr) return nullptr;
  auto it = parent->find(std::string(key));
  if (it == parent->end() || it->is_null()) return nullptr;
  if (!it->is_object()) return Err(InvalidArgumentError("config: " + path + " must be a mapping"));
  return &*it;
}

}  // namespace

Result<ConfigSection> ConfigSection::Of(const Config& config, std::string_view name) {
  std::string path(name);
  const Json* json = TALARIA_TRY(MappingAt(config.raw.get(), name, path));
  return ConfigSection(json, std::move(path));
}

Result<ConfigSection> ConfigSection::Sub(std::string_view key) const {
  std::string path = path_;
  path += '.';
  path += key;
  const Json* json = TALARIA_TRY(MappingAt(json_, key, path));
  return ConfigSection(json, std::move(path));
}

Status ConfigSection::Bad(std::string_view key, std::string_view what) const {
  std::string message = "config: ";
  message += path_;
  message += '.';
  message += key;
  message += " must be ";
  message += what;
  return InvalidArgumentError(std::move(message));
}

const Json* ConfigSection::Find(std::string_view key) const {
  if (json_ == nullptr) return nullptr;
  auto it = json_->find(std::string(key));
  return it == json_->end() || it->is_null() ? nullptr : &*it;
}

Status ConfigSection::ReadString(std::string_view key, std::string& out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_string()) return Bad(key, "a string");
  out = v->get<std::string>();
  return Status::Ok();
}

Status ConfigSection::ReadStrings(std::string_view key, std::vector<std::string>& out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_array()) return Bad(key, "a list of strings");
  std::vector<std::string> read;
  for (const Json& item : *v) {
    if (!item.is_string()) return Bad(key, "a list of strings");
    read.push_back(item.get<std::string>());
  }
  out.insert(out.end(), read.begin(), read.end());
  return Status::Ok();
}

Status ConfigSection::ReadBool(std::string_view key, bool& out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_boolean()) return Bad(key, "true or false");
  out = v->get<bool>();
  return Status::Ok();
}

Status ConfigSection::ReadBool(std::string_view key, std::optional<bool>& out) const {
  if (Find(key) == nullptr) return Status::Ok();
  bool value = false;
  TALARIA_RETURN_IF_ERROR(ReadBool(key, value));
  out = value;
  return Status::Ok();
}

Status ConfigSection::ReadInt(std::string_view key, int64_t min, int64_t max, int64_t& out) const {
  const Json* v = Find(key);
  if (v == nullptr) return Status::Ok();
  if (!v->is_number_integer() || v->get<int64_t>() < min || v->get<int64_t>() > max) {
    std::string what = "an integer from ";
    what += std::to_string(min);
    what += " to ";
    what += std::to_string(max);
    return Bad(key, what);
  }
  out = v->get<int64_t>();
  return Status::Ok();
}

}  // namespace talaria
