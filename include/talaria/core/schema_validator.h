// SchemaValidator: a JSON Schema compiled once, then checked against many instances fast.
//
// Supports the keywords of drafts 4, 6 and 7 that tool schemas use (type, enum, const,
// properties, required, additionalProperties, patternProperties, items/additionalItems,
// contains, min/max*, exclusive*, multipleOf, pattern (RE2), allOf/anyOf/oneOf/not,
// if/then/else, dependencies, propertyNames, uniqueItems, local $ref / definitions). "format"
// is an annotation only. Compilation fails on a malformed schema, so a bad tool schema is
// refused at registration, not at call time.
// Thread-safety: a compiled validator is immutable; Validate may run concurrently.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria {

class SchemaValidator {
 public:
  // InvalidArgument when `schema` is not a valid schema (a keyword of the wrong type, a $ref
  // that does not resolve, a pattern RE2 rejects).
  static Result<SchemaValidator> Compile(const Json& schema);

  SchemaValidator(SchemaValidator&&) noexcept;
  SchemaValidator& operator=(SchemaValidator&&) noexcept;
  ~SchemaValidator();

  // True when `instance` conforms. With `errors`, appends one readable line per problem,
  // each starting with the instance path: "todos[0].status: must be one of [...]"; the
  // root is "(root)".
  bool Validate(const Json& instance, std::vector<std::string>* errors = nullptr) const;

 private:
  struct Impl;
  explicit SchemaValidator(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace talaria
