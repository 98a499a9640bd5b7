// ToolSpec (what a tool declares) and ToolEntry (what the registry keeps).
//
// A ToolEntry is immutable once registered and shared between registry snapshots, so it is
// kept compact: the schema is stored once as compact JSON text (the definition the model sees)
// and compiled into a coercion plan and validator on first use; rarely used fields live in an
// out-of-line Extras block.
// Thread-safety: ToolEntry is immutable and safe to share; its lazily compiled schema is
// built under std::call_once.
#pragma once

#include <cstdint>
#include <functional>
#include <future>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "talaria/base/json.h"
#include "talaria/base/status.h"
#include "talaria/core/tool_context.h"
#include "talaria/core/tool_result.h"

namespace talaria {

using SyncHandler = std::function<ToolResult(const Json& args, ToolContext& ctx)>;
// Async handlers run on the shared executor; the dispatcher waits with the call's deadline.
using AsyncHandler = std::function<std::future<ToolResult>(Json args, ToolContext& ctx)>;
// Availability probe. Throwing counts as "unavailable".
using CheckFn = std::function<bool()>;
// Why a tool is unavailable, asked only after its check failed, in words a user can act on
// ("set FAL_KEY or image_generate.provider in config.yaml"). Empty answer: the generic reason.
using UnavailableReasonFn = std::function<std::string()>;
// Rewrites spellings a tool accepts besides its schema's (e.g. an enum value's old alias) in
// place, before coercion and validation see the arguments. Must not throw.
using ArgNormalizer = void (*)(Json& args);
// The text the command guard judges for a call of a tool with a command_arg, given that
// argument's value. A tool whose input reaches a shell in pieces returns what the shell will
// read once this call's piece arrives (process: the line left unfinished, then `command`).
using CommandTextFn = std::string (*)(const Json& args, const ToolContext& ctx,
                                      std::string_view command);

// Who executes a call: the dispatcher runs the tool's handler; the agent loop runs tools whose
// state belongs to the conversation (its todo list, memory, the model client), which no
// handler can reach. Outside a loop such a tool is unavailable, with that reason.
enum class CallOwner : unsigned char { kDispatcher, kAgentLoop };

// The paths a call touches that its path_args do not name (patch's V4A text names its files
// inside the text). nullopt: the path_args tell. An error: the call cannot be scoped and runs
// alone, with the message as the reason.
using CallPathsFn = Result<std::optional<std::vector<std::string>>> (*)(const Json& args);

// Which calls of one model turn may run at the same time.
enum class ParallelClass : unsigned char {
  kNever,       // a barrier: runs alone, in order
  kSafe,        // may run beside any other safe or path-scoped call
  kPathScoped,  // may run beside others whose path scopes do not conflict
};

std::string_view ParallelClassName(ParallelClass c);

// MCP tool annotations (hints; never trusted for security decisions).
struct ToolAnnotations {
  bool read_only = false;
  bool destructive = false;
  bool idempotent = false;
  bool open_world = false;
};

inline constexpr std::string_view kDefaultEmoji = "\xE2\x9A\xA1";  // "⚡"
inline constexpr int64_t kDefaultMaxResultChars = 100'000;

// The schema of a ToolSpec: JSON text or a DOM, borrowed only for the Register call.
class SchemaSource {
 public:
  SchemaSource() = default;
  SchemaSource(std::string_view json_text) : text_(json_text) {}  // NOLINT: implicit by design
  SchemaSource(const char* json_text) : text_(json_text) {}       // NOLINT
  SchemaSource(const Json& dom) : dom_(&dom) {}                   // NOLINT

  const Json* dom() const { return dom_; }
  std::string_view text() const { return text_; }

 private:
  std::string_view text_;
  const Json* dom_ = nullptr;
};

// Whether a path argument is read or written by the tool (drives the parallel planner).
enum class PathAccess : unsigned char { kRead, kWrite };

// What a tool declares about itself; consumed by Registry::Register.
struct ToolSpec {
  std::string name;
  std::string toolset;
  SchemaSource schema;  // {"name", "description", "parameters": {object schema}}
  SyncHandler handler;
  AsyncHandler async_handler;  // set instead of `handler` for async tools
  CheckFn check_fn;
  UnavailableReasonFn unavailable_reason;  // null: "availability check failed"
  std::vector<std::string> requires_env;
  std::string description;        // defaults to the schema's description
  std::string emoji;              // defaults to kDefaultEmoji
  int64_t max_result_chars = -1;  // -1: the default (100,000)
  ParallelClass parallel = ParallelClass::kNever;
  std::vector<std::string> path_args;  // argument names carrying paths (kPathScoped)
  PathAccess path_access = PathAccess::kRead;
  ToolAnnotations annotations;
  ArgNormalizer normalize_args = nullptr;
  // The argument that carries a shell command line (terminal: "command"): the policy stage
  // judges it with the command guard. Empty: the tool runs no commands.
  std::string command_arg;
  // null: the guard judges the command_arg's value as it is.
  CommandTextFn command_text = nullptr;
  CallOwner owner = CallOwner::kDispatcher;
  // A read or a search: the read-loop guard counts runs of these; any other call ends a run.
  bool counts_as_read = false;
  // Its results are never spilled to a file: spill files are read back with this tool, so a
  // spilled read would only spill again (read_file pages instead).
  bool never_spill = false;
  // Older names a model may still call the tool by; a registered tool's own name wins.
  std::vector<std::string> aliases;
  CallPathsFn call_paths = nullptr;  // null: only path_args name the call's paths
};

class CompiledSchema;  // coercion plan + validator, core-internal.

class ToolEntry {
 public:
  // REQUIRES: `schema_text` is compact JSON of an object schema whose "name" is `spec.name`.
  ToolEntry(ToolSpec spec, std::string schema_text);
  ~ToolEntry();
  ToolEntry(const ToolEntry&) = delete;
  ToolEntry& operator=(const ToolEntry&) = delete;

  const std::string& name() const { return name_; }
  const std::string& toolset() const { return toolset_; }
  // The function schema as the model sees it (compact JSON, "name" forced to name()).
  const std::string& schema_text() const;
  std::string description() const;
  std::string_view emoji() const;
  int64_t max_result_chars() const { return max_result_chars_; }  // -1 = default
  ParallelClass parallel() const { return parallel_; }
  PathAccess path_access() const { return path_access_; }
  ToolAnnotations annotations() const;
  bool is_async() const;

  const SyncHandler& handler() const { return handler_; }
  const AsyncHandler& async_handler() const;
  // Shared so the registry can key its availability cache on the function's identity.
  const std::shared_ptr<const CheckFn>& check_fn() const;
  const UnavailableReasonFn& unavailable_reason() const;
  const std::vector<std::string>& requires_env() const;
  const std::vector<std::string>& path_args() const;
  ArgNormalizer normalize_args() const;    // null when the tool has none
  const std::string& command_arg() const;  // empty when the tool runs no commands
  CommandTextFn command_text() const;      // null when the value is judged as it is
  CallOwner owner() const {
    return (trait_bits_ & kLoopOwned) != 0 ? CallOwner::kAgentLoop : CallOwner::kDispatcher;
  }
  bool counts_as_read() const { return (trait_bits_ & kCountsAsRead) != 0; }
  bool never_spill() const { return (trait_bits_ & kNeverSpill) != 0; }
  const std::vector<std::string>& aliases() const;
  CallPathsFn call_paths() const;  // null when path_args name every path

  // The schema compiled for coercion and validation; built once, on first use. Never fails:
  // a schema that cannot be compiled was refused at registration.
  const CompiledSchema& compiled() const;

 private:
  struct Extras;
  struct Schema;
  // Flags read on every call, kept beside the name rather than in Extras.
  enum TraitBit : unsigned char { kLoopOwned = 1, kCountsAsRead = 2, kNeverSpill = 4 };

  std::string name_;
  std::string toolset_;
  std::shared_ptr<Schema> schema_;
  SyncHandler handler_;
  std::unique_ptr<const Extras> extras_;  // null when every rare field has its default
  int64_t max_result_chars_ = -1;
  ParallelClass parallel_ = ParallelClass::kNever;
  PathAccess path_access_ = PathAccess::kRead;
  unsigned char annotation_bits_ = 0;
  unsigned char trait_bits_ = 0;
};

}  // namespace talaria
