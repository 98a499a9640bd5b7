// Script tools: a manifest (`<name>.tool.yaml`, `.tool.yml` or `.tool.json`) turns any executable
// into a tool. The validated arguments reach the program as one JSON object on stdin; what it
// prints is the result.
//
//   name: word_count                      # the tool's wire name, [A-Za-z0-9_-]{1,64}
//   toolset: scripts                      # default "scripts"; mcp-* is reserved
//   description: Count the words of a text
//   parameters: {type: object, properties: {text: {type: string}}, required: [text]}
//   command: python3 "$TALARIA_TOOL_DIR/word_count.py"
//   parallel: never                       # never (default) | safe
//   timeout: 30                           # seconds, default 60, at most 3600
//
// The manifest is the pre-scan: it is parsed and checked (shape, schema, and the command judged
// by the command guard) without running anything; a bad one is reported and skipped. The command
// runs through the session's Environment — the one the terminal tool uses (local, sandbox, SSH,
// Docker) — in a subshell (it cannot change the session's directory or variables), with
// $TALARIA_TOOL_DIR set to the manifest's directory, the call's deadline and cancellation.
// The guard's verdict is fixed per manifest: a command it would block or send for approval is
// refused at discovery (script tools run unattended; nobody could approve them per call).
// Exit status 0: the output is the result (a JSON object with an "error" key marks a failure);
// otherwise an error result carries the exit status and the output.
// FIXME: Environment interleaves stderr with stdout, so a script's stderr lands in its result.
// Thread-safety: free functions; the handlers are thread-safe.
#pragma once

#include <chrono>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/core/tool_entry.h"
#include "talaria/guard/command_guard.h"

namespace talaria::plugins {

struct ScriptManifest {
  std::string name;
  std::string toolset = "scripts";
  std::string description;
  std::string schema;  // compact {"name", "description", "parameters"} as the model sees it
  std::string command;
  ParallelClass parallel = ParallelClass::kNever;
  std::chrono::milliseconds timeout{60'000};
  std::string dir;  // absolute directory of the manifest ($TALARIA_TOOL_DIR)
};

enum class ManifestFormat : unsigned char { kYaml, kJson };

// The manifest format a file name implies; false when it is not a manifest name.
bool ManifestFormatOf(std::string_view file_name, ManifestFormat& format, std::string_view& stem);

// Parses and checks one manifest. InvalidArgument naming the field for anything wrong (syntax,
// missing or mistyped fields, a schema whose "parameters" is not an object schema, a timeout
// out of range); PermissionDenied when the command guard would block the command or ask for
// approval. `dir` is recorded as the manifest's directory.
Result<ScriptManifest> ParseToolManifest(std::string_view text, ManifestFormat format,
                                         std::string dir, const safety::GuardOptions& guard);

// The ToolSpec that runs `manifest` (it keeps its own copy of the manifest).
ToolSpec ScriptToolSpec(const ScriptManifest& manifest);

}  // namespace talaria::plugins
