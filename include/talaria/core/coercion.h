// Schema-guided repair of stringly-typed tool arguments ("42" -> 42, "true" -> true, ...).
//
// The seed's rules, exactly: numeric strings become ints when integral (inf/nan become floats;
// an integer field given "42.5" keeps the string); "true"/"false" case-insensitive after
// trimming, nothing else; union types tried in order, first successful coercion wins. Plus the
// newer original's: "null" where the schema allows null; JSON text for array/object parameters
// (kept only if the parsed type matches; "" becomes {} for an object without "required"); a
// bare scalar for an array becomes a one-element array; recursion into items, properties and
// anyOf/oneOf/allOf branches. Anything ambiguous keeps the original value.
// Thread-safety: a CoercionPlan is immutable; Coerce may run concurrently on different args.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "talaria/base/json.h"
#include "talaria/base/status.h"

namespace talaria {

class Registry;

class CoercionPlan {
 public:
  // `parameters` is the tool's parameters schema (an object schema). Never fails: keywords of
  // an unexpected shape are ignored (coercion is best effort; validation reports problems).
  static CoercionPlan Compile(const Json& parameters);

  CoercionPlan(CoercionPlan&&) noexcept;
  CoercionPlan& operator=(CoercionPlan&&) noexcept;
  ~CoercionPlan();

  // Repairs `args` in place; a non-object is left alone.
  void Coerce(Json& args) const;

  struct Node;

 private:
  explicit CoercionPlan(std::unique_ptr<Node> root);
  std::unique_ptr<Node> root_;
};

// Looks `tool_name` up in `registry` and coerces `args` against its schema; returns `args`
// unchanged for an unknown tool (the original's coerce_tool_args).
Json CoerceToolArgs(const Registry& registry, std::string_view tool_name, Json args);

}  // namespace talaria
