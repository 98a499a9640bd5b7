// Python class outlines (python_outline.h): the embedded interpreter's JSON, read into structs.
#include "talaria/lint/python_outline.h"

#include <string>
#include <utility>

#include <nlohmann/json.hpp>

#include "lint/linters.h"

namespace talaria::lint {
namespace {

std::optional<PythonValue> ValueOf(const Json& j) {
  if (!j.is_object()) return std::nullopt;
  PythonValue v;
  if (auto it = j.find("value"); it != j.end()) {
    v.value = *it;
  } else if (auto n = j.find("name"); n != j.end() && n->is_string()) {
    v.name = n->get<std::string>();
  } else {
    return std::nullopt;
  }
  return v;
}

int IntOf(const Json& object, std::string_view key) {
  auto it = object.find(key);
  return it != object.end() && it->is_number_integer() ? it->get<int>() : 0;
}

}  // namespace

const PythonValue* PythonClass::Attribute(std::string_view key) const {
  for (const auto& [name, value] : attributes) {
    if (name == key) return &value;
  }
  return nullptr;
}

Result<std::vector<PythonClass>> OutlinePythonClasses(std::string_view source,
                                                      std::string_view path) {
  const std::string text = TALARIA_TRY(lint_internal::OutlinePythonJson(source, path));
  const Json json = TALARIA_TRY(ParseJson(text));
  std::vector<PythonClass> classes;
  if (!json.is_array()) return classes;
  for (const Json& c : json) {
    if (!c.is_object()) continue;
    PythonClass pc;
    pc.name = JsonStringField(c, "name");
    pc.line = IntOf(c, "line");
    pc.docstring = JsonStringField(c, "docstring");
    if (auto b = c.find("bases"); b != c.end() && b->is_array()) {
      for (const Json& base : *b) {
        if (base.is_string()) pc.bases.push_back(base.get<std::string>());
      }
    }
    if (auto a = c.find("attributes"); a != c.end() && a->is_object()) {
      for (const auto& [name, value] : a->items()) {
        if (auto v = ValueOf(value)) pc.attributes.emplace_back(name, std::move(*v));
      }
    }
    if (auto f = c.find("fields"); f != c.end() && f->is_array()) {
      for (const Json& field : *f) {
        if (!field.is_object()) continue;
        PythonField pf;
        pf.name = JsonStringField(field, "name");
        pf.line = IntOf(field, "line");
        pf.annotation = JsonStringField(field, "annotation");
        pf.description = JsonStringField(field, "description");
        if (auto d = field.find("default"); d != field.end()) pf.default_value = ValueOf(*d);
        pc.fields.push_back(std::move(pf));
      }
    }
    classes.push_back(std::move(pc));
  }
  return classes;
}

}  // namespace talaria::lint
