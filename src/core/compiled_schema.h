// The parts of a tool schema compiled for the call path: coercion plan and validator.
#pragma once

#include <optional>

#include "talaria/base/json.h"
#include "talaria/core/coercion.h"
#include "talaria/core/schema_validator.h"

namespace talaria {

class CompiledSchema {
 public:
  // `function_schema` is the whole {"name","description","parameters"} object.
  static Result<CompiledSchema> Compile(const Json& function_schema);

  const CoercionPlan& coercion() const { return coercion_; }
  const SchemaValidator& validator() const { return validator_; }

 private:
  CompiledSchema(CoercionPlan coercion, SchemaValidator validator)
      : coercion_(std::move(coercion)), validator_(std::move(validator)) {}

  CoercionPlan coercion_;
  SchemaValidator validator_;
};

}  // namespace talaria
