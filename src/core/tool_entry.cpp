#include "talaria/core/tool_entry.h"

#include <atomic>
#include <mutex>

#include <nlohmann/json.hpp>

#include "core/compiled_schema.h"
#include "talaria/base/log.h"

namespace talaria {

std::string_view ParallelClassName(ParallelClass c) {
  switch (c) {
    case ParallelClass::kNever:
      return "never";
    case ParallelClass::kSafe:
      return "safe";
    case ParallelClass::kPathScoped:
      return "path_scoped";
  }
  return "never";
}

// Fields most tools leave at their defaults, kept out of line so an entry stays small.
struct ToolEntry::Extras {
  AsyncHandler async_handler;
  std::shared_ptr<const CheckFn> check_fn;
  UnavailableReasonFn unavailable_reason;
  std::vector<std::string> requires_env;
  std::vector<std::string> path_args;
  std::string description;  // only when it differs from the schema's
  std::string emoji;        // only when not the default
  ArgNormalizer normalize_args = nullptr;
  std::string command_arg;
  CommandTextFn command_text = nullptr;
  std::vector<std::string> aliases;
  CallPathsFn call_paths = nullptr;
};

struct ToolEntry::Schema {
  std::string text;
  std::once_flag once;
  std::unique_ptr<CompiledSchema> compiled;
  // Set (release) once `compiled` is built: the call path reads it with one acquire load,
  // where std::call_once cost a hundred instructions per dispatch even when done.
  std::atomic<const CompiledSchema*> ready{nullptr};
};

namespace {

enum AnnotationBit : unsigned char {
  kReadOnly = 1,
  kDestructive = 2,
  kIdempotent = 4,
  kOpenWorld = 8,
};

}  // namespace

ToolEntry::ToolEntry(ToolSpec spec, std::string schema_text)
    : name_(std::move(spec.name)),
      toolset_(std::move(spec.toolset)),
      schema_(std::make_shared<Schema>()),
      handler_(std::move(spec.handler)),
      max_result_chars_(spec.max_result_chars),
      parallel_(spec.parallel),
      path_access_(spec.path_access) {
  schema_->text = std::move(schema_text);
  const ToolAnnotations& a = spec.annotations;
  annotation_bits_ = static_cast<unsigned char>(
      (a.read_only ? kReadOnly : 0) | (a.destructive ? kDestructive : 0) |
      (a.idempotent ? kIdempotent : 0) | (a.open_world ? kOpenWorld : 0));
  trait_bits_ = static_cast<unsigned char>((spec.owner == CallOwner::kAgentLoop ? kLoopOwned : 0) |
                                           (spec.counts_as_read ? kCountsAsRead : 0) |
                                           (spec.never_spill ? kNeverSpill : 0));
  const bool needs_extras = spec.async_handler || spec.check_fn || !spec.requires_env.empty() ||
                            !spec.path_args.empty() || !spec.description.empty() ||
                            spec.normalize_args != nullptr || !spec.command_arg.empty() ||
                            !spec.aliases.empty() || spec.call_paths != nullptr ||
                            (!spec.emoji.empty() && spec.emoji != kDefaultEmoji);
  if (needs_extras) {
    auto extras = std::make_unique<Extras>();
    extras->async_handler = std::move(spec.async_handler);
    if (spec.check_fn) extras->check_fn = std::make_shared<const CheckFn>(std::move(spec.check_fn));
    extras->unavailable_reason = std::move(spec.unavailable_reason);
    extras->requires_env = std::move(spec.requires_env);
    extras->path_args = std::move(spec.path_args);
    extras->description = std::move(spec.description);
    extras->normalize_args = spec.normalize_args;
    extras->command_arg = std::move(spec.command_arg);
    extras->command_text = spec.command_text;
    extras->aliases = std::move(spec.aliases);
    extras->call_paths = spec.call_paths;
    if (spec.emoji != kDefaultEmoji) extras->emoji = std::move(spec.emoji);
    extras_ = std::move(extras);
  }
}

ToolEntry::~ToolEntry() = default;

const std::string& ToolEntry::schema_text() const { return schema_->text; }

std::string ToolEntry::description() const {
  if (extras_ && !extras_->description.empty()) return extras_->description;
  // Rarely asked for (listings), so the schema text is parsed instead of storing a copy.
  auto parsed = ParseJson(schema_->text);
  if (!parsed) return {};
  auto it = parsed->find("description");
  return it != parsed->end() && it->is_string() ? it->get<std::string>() : std::string();
}

std::string_view ToolEntry::emoji() const {
  if (extras_ && !extras_->emoji.empty()) return extras_->emoji;
  return kDefaultEmoji;
}

ToolAnnotations ToolEntry::annotations() const {
  return ToolAnnotations{
      (annotation_bits_ & kReadOnly) != 0, (annotation_bits_ & kDestructive) != 0,
      (annotation_bits_ & kIdempotent) != 0, (annotation_bits_ & kOpenWorld) != 0};
}

bool ToolEntry::is_async() const { return extras_ && extras_->async_handler; }

const AsyncHandler& ToolEntry::async_handler() const {
  static const AsyncHandler kNone;
  return extras_ ? extras_->async_handler : kNone;
}

const std::shared_ptr<const CheckFn>& ToolEntry::check_fn() const {
  static const std::shared_ptr<const CheckFn> kNone;
  return extras_ ? extras_->check_fn : kNone;
}

const UnavailableReasonFn& ToolEntry::unavailable_reason() const {
  static const UnavailableReasonFn kNone;
  return extras_ ? extras_->unavailable_reason : kNone;
}

const std::vector<std::string>& ToolEntry::requires_env() const {
  static const std::vector<std::string> kNone;
  return extras_ ? extras_->requires_env : kNone;
}

const std::vector<std::string>& ToolEntry::path_args() const {
  static const std::vector<std::string> kNone;
  return extras_ ? extras_->path_args : kNone;
}

const std::string& ToolEntry::command_arg() const {
  static const std::string kNone;
  return extras_ ? extras_->command_arg : kNone;
}

CommandTextFn ToolEntry::command_text() const { return extras_ ? extras_->command_text : nullptr; }

const std::vector<std::string>& ToolEntry::aliases() const {
  static const std::vector<std::string> kNone;
  return extras_ ? extras_->aliases : kNone;
}

CallPathsFn ToolEntry::call_paths() const { return extras_ ? extras_->call_paths : nullptr; }

ArgNormalizer ToolEntry::normalize_args() const {
  return extras_ ? extras_->normalize_args : nullptr;
}

const CompiledSchema& ToolEntry::compiled() const {
  if (const CompiledSchema* done = schema_->ready.load(std::memory_order_acquire)) return *done;
  std::call_once(schema_->once, [this] {
    auto parsed = ParseJson(schema_->text);
    auto compiled = parsed ? CompiledSchema::Compile(*parsed) : Err(parsed.error());
    if (!compiled) {
      // Registration compiled this schema once already, so this cannot happen; stay safe.
      LogError("tool " + name_ + ": schema failed to compile: " + compiled.error().message());
      compiled = CompiledSchema::Compile(Json::object());
    }
    schema_->compiled = std::make_unique<CompiledSchema>(std::move(*compiled));
    schema_->ready.store(schema_->compiled.get(), std::memory_order_release);
  });
  return *schema_->compiled;
}

}  // namespace talaria
