#include "core/compiled_schema.h"

#include <nlohmann/json.hpp>

namespace talaria {

Result<CompiledSchema> CompiledSchema::Compile(const Json& function_schema) {
  static const Json kEmptyObjectSchema = Json::object({{"type", "object"}});
  auto it = function_schema.find("parameters");
  const Json& parameters = it != function_schema.end() ? *it : kEmptyObjectSchema;
  auto validator = SchemaValidator::Compile(parameters);
  if (!validator) return Err(validator.error().WithContext("parameters"));
  return CompiledSchema(CoercionPlan::Compile(parameters), std::move(*validator));
}

}  // namespace talaria
