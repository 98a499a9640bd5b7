// talaria: the command-line front end. Parses arguments, builds the Runtime from config.yaml,
// and hands off to one subcommand.
#include <cstdio>
#include <string>

#include <CLI/CLI.hpp>

#include "cli/agent_commands.h"
#include "cli/browser_daemon.h"
#include "cli/checkpoints_command.h"
#include "cli/commands.h"
#include "cli/plugins_command.h"
#include "cli/startup.h"
#include "talaria/env/hide_secrets.h"
#include "talaria/mcp/features.h"

namespace {

std::vector<std::string> SplitCommas(const std::vector<std::string>& raw) {
  std::vector<std::string> out;
  for (const auto& item : raw) {
    size_t start = 0;
    while (start <= item.size()) {
      size_t comma = item.find(',', start);
      if (comma == std::string::npos) comma = item.size();
      if (comma > start) out.push_back(item.substr(start, comma - start));
      start = comma + 1;
    }
  }
  return out;
}

}  // namespace

int main(int argc, char** argv) {
  using namespace talaria;
  // Before any thread or child exists: the agent's commands must not read our API keys back
  // from /proc/$PPID/environ.
  env::HideSecretsFromChildren();
  CLI::App app{"talaria: a fast, safe tool runtime for LLM agents"};
  app.require_subcommand(1);
  app.set_version_flag("--version", "talaria " TALARIA_VERSION, "print the version and exit");
  // Subcommands inherit this: `talaria tools --config x.yaml` works like `talaria --config
  // x.yaml tools`.
  app.fallthrough();
  std::string config_path;
  app.add_option("--config", config_path,
                 "config file (default: $TALARIA_HOME/config.yaml; one named here must exist); "
                 "accepted before or after the subcommand");

  cli::ToolsOptions tools_opts;
  std::vector<std::string> tools_toolsets;
  CLI::App* tools = app.add_subcommand("tools", "List tools: emoji, name, toolset, availability");
  tools->add_option("--toolsets", tools_toolsets, "only these toolsets (comma-separated)");
  tools->add_flag("--json", tools_opts.json, "print OpenAI-format function definitions");

  CLI::App* toolsets =
      app.add_subcommand("toolsets", "List toolsets, what they include, and their size");

  cli::CallOptions call_opts;
  CLI::App* call = app.add_subcommand("call", "Run one tool call through the whole pipeline");
  call->add_option("name", call_opts.name, "tool name")->required();
  call->add_option("assignments", call_opts.assignments,
                   "arguments as key=value (values are strings; coercion types them)");
  call->add_option("--args", call_opts.args_json,
                   "arguments as a JSON object (key=value pairs override)");
  call->add_option("--root", call_opts.session.roots,
                   "directory the file tools may use (repeatable; default: .)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  call->add_option("--task", call_opts.task,
                   "browser task whose page the browser tools act on (default: cli); separate "
                   "calls of one task share it");

  // Started by `talaria call` for the browser tools; not for people (hidden).
  cli::BrowserDaemonOptions daemon_opts;
  CLI::App* browser_daemon = app.add_subcommand("browser-daemon", "");
  browser_daemon->group("");
  browser_daemon->add_option("--task", daemon_opts.task, "the browser task served");
  browser_daemon->add_option("--ready-fd", daemon_opts.ready_fd, "where to say ready");

  cli::BatchCommandOptions batch_opts;
  CLI::App* batch = app.add_subcommand(
      "batch",
      "Run one turn's tool calls (JSON lines of {name, arguments}, or an assistant message with\n"
      "tool_calls) in parallel where safe; print one tool message per call, in order.\n"
      "Ctrl-C or SIGTERM cancels. Exit status: 0 all ok, 1 a call failed, 2 bad input, 128+N "
      "signal N");
  batch->add_option("input", batch_opts.input, "file to read, or - for stdin (default: stdin)");
  batch->add_flag("--plan", batch_opts.plan_only, "print the segments without running anything");
  batch->add_flag("--json", batch_opts.json, "with --plan: the plan as JSON");
  batch->add_flag("--quiet", batch_opts.quiet, "no progress line on a terminal");
  batch->add_option("--workers", batch_opts.workers, "parallel workers (default 8)")
      ->check(CLI::Range(1, 64));
  batch
      ->add_option("--timeout", batch_opts.timeout_s,
                   "batch deadline in seconds (default 420; 0: none)")
      ->check(CLI::NonNegativeNumber);
  batch
      ->add_option("--root", batch_opts.session.roots,
                   "directory the file tools may use (repeatable; default: .)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  cli::McpCommandOptions mcp_opts;
  std::vector<std::string> mcp_toolsets;
  CLI::App* mcp = app.add_subcommand(
      "mcp",
      "Serve tools as an MCP server over stdio (JSON-RPC lines on stdin/stdout, logs on stderr),\n"
      "or over Streamable HTTP with --http. Runs until stdin closes (stdio) or SIGINT/SIGTERM;\n"
      "approvals fall back to deny (nobody can answer a prompt)");
  mcp->add_option("--toolsets", mcp_toolsets,
                  "toolsets to expose (comma-separated; default talaria-mcp)");
  mcp->add_option("--root", mcp_opts.session.roots,
                  "directory the file tools may use (repeatable; default: .)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  mcp->add_option("--http", mcp_opts.http,
                  "serve Streamable HTTP on HOST:PORT (endpoint /mcp; e.g. 127.0.0.1:8765; port 0: "
                  "any free one)");
  mcp->add_option("--token", mcp_opts.token,
                  "with --http: require 'Authorization: Bearer TOKEN' (needed to bind a "
                  "non-loopback address)")
      ->envname("TALARIA_MCP_TOKEN");
  mcp->add_option(
         "--allow-origin", mcp_opts.allow_origins,
         "with --http: an Origin to accept besides the server's own (http://localhost:PORT), e.g. "
         "http://localhost:5173 for a local web UI (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
  mcp->add_option("--allow-host", mcp_opts.allow_hosts,
                  "with --http: a Host header to accept besides the bound address and localhost, "
                  "e.g. myhost:8765 "
                  "(repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  mcp->add_option("--plugins", mcp_opts.plugin_dirs,
                  "another plugin directory to load (repeatable); its tools, resources and prompts "
                  "are served when "
                  "their toolset is selected with --toolsets")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  cli::PluginsOptions plugins_opts;
  CLI::App* plugins = app.add_subcommand(
      "plugins",
      "Discover plugins (*.so) and script tools (*.tool.yaml|yml|json) in $TALARIA_HOME/plugins,\n"
      "the config's plugins.dirs and --plugins DIRs; list every candidate's verdict.\n"
      "Exit status: 0 none failed, 1 a candidate failed to load, 2 bad config");
  plugins->add_flag("--json", plugins_opts.json, "print the report as JSON");
  plugins->add_flag("--no-cache", plugins_opts.no_cache, "ignore the pre-scan verdict cache");
  plugins->add_option("--plugins", plugins_opts.dirs, "another directory to scan (repeatable)")
      ->allow_extra_args(false)
      ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);

  // The agent: run, chat, sessions. run and chat share their flags.
  auto add_agent_flags = [](CLI::App* cmd, cli::AgentFlags& flags,
                            std::vector<std::string>& toolsets) {
    cmd->add_option("--toolsets", toolsets, "toolsets the model may use (comma-separated)");
    cmd->add_option("--model", flags.model, "model name (overrides model.name and TALARIA_MODEL)");
    cmd->add_option("--base-url", flags.base_url,
                    "the OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1 (overrides "
                    "model.base_url and TALARIA_BASE_URL)");
    cmd->add_option("--max-iterations", flags.max_iterations,
                    "model requests per turn before it must answer (default 90)")
        ->check(CLI::Range(1, 10000));
    cmd->add_option("--root", flags.session.roots,
                    "directory the file tools may use (repeatable; default: .)")
        ->allow_extra_args(false)
        ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll);
    cmd->add_option("--resume", flags.resume, "continue the session with this id");
    cmd->add_flag("--continue", flags.continue_latest,
                  "continue the latest session in this directory");
  };
  cli::RunOptions run_opts;
  std::vector<std::string> run_toolsets;
  CLI::App* run = app.add_subcommand(
      "run",
      "Run one task with the agent: the answer is streamed to stdout, tool calls to stderr.\n"
      "The model: --model/--base-url, TALARIA_MODEL/TALARIA_BASE_URL or config.yaml's model:;\n"
      "the key from TALARIA_API_KEY or OPENAI_API_KEY (none for a local server).\n"
      "Exit status: 0 answered, 1 model or budget failure, 2 usage error, 130 Ctrl-C");
  run->add_option("prompt", run_opts.prompt, "the task")->required();
  run->add_flag("--json", run_opts.json, "print one JSON event per line instead");
  add_agent_flags(run, run_opts.agent, run_toolsets);

  cli::ChatOptions chat_opts;
  std::vector<std::string> chat_toolsets;
  CLI::App* chat =
      app.add_subcommand("chat",
                         "Talk with the agent on the terminal (/help inside lists the commands).\n"
                         "Ctrl-C cancels the answer in progress, twice leaves; Ctrl-D leaves");
  add_agent_flags(chat, chat_opts.agent, chat_toolsets);

  cli::SessionsOptions sessions_opts;
  CLI::App* sessions =
      app.add_subcommand("sessions", "The agent's sessions ($TALARIA_HOME/sessions.db)");
  sessions->require_subcommand(1);
  CLI::App* sessions_list = sessions->add_subcommand("list", "Recent sessions, newest first");
  sessions_list->add_flag("--here", sessions_opts.here, "only sessions of this directory");
  sessions_list->add_option("--limit", sessions_opts.limit, "how many (default 20)");
  CLI::App* sessions_show = sessions->add_subcommand("show", "A session's messages");
  sessions_show->add_option("id", sessions_opts.id, "session id")->required();
  CLI::App* sessions_usage = sessions->add_subcommand(
      "usage", "Tokens and cost: per request of one session, or per session");
  sessions_usage->add_option("id", sessions_opts.id, "session id (default: every session)");
  CLI::App* sessions_delete =
      sessions->add_subcommand("delete", "Delete a session and its messages");
  sessions_delete->add_option("id", sessions_opts.id, "session id")->required();
  for (CLI::App* sub : {sessions_list, sessions_show, sessions_usage, sessions_delete}) {
    sub->add_flag("--json", sessions_opts.json, "print JSON");
  }

  cli::CheckCommandOptions check_opts;
  CLI::App* check = app.add_subcommand(
      "check-command",
      "Judge a shell command with the command guard.\n"
      "Exit status: 0 allow, 1 approve (needs a human), 2 block (never runs; also usage errors)");
  check->add_flag("--json", check_opts.json, "print {verdict, tier, reasons} as JSON");
  check->add_option("command", check_opts.command, "the command line (put it after --)")
      ->required();

  cli::TrustOptions trust_opts;
  CLI::App* trust = app.add_subcommand(
      "trust",
      "Trust a project-local config (.talaria/config.yaml), so its mcp_servers and hooks run.\n"
      "Prints what it runs, then records the file's SHA-256 in $TALARIA_HOME/trusted.json;\n"
      "any edit makes it untrusted again. Exit status: 0 done, 1 cannot record, 2 no/broken file");
  trust->add_option("path", trust_opts.path, "the file, or its project directory (default: .)");
  trust->add_flag("--revoke", trust_opts.revoke, "stop trusting it");

  cli::MemoryCommandOptions memory_opts;
  CLI::App* memory_cmd = app.add_subcommand(
      "memory",
      "The agent's memory ($TALARIA_HOME/memories/MEMORY.md and USER.md): what it keeps\n"
      "between sessions. Exit status: 0 done, 1 refused or failed, 2 usage errors");
  memory_cmd->require_subcommand(1);
  CLI::App* memory_show = memory_cmd->add_subcommand("show", "The entries (both files by default)");
  memory_show->add_flag("--json", memory_opts.json, "print JSON");
  CLI::App* memory_edit = memory_cmd->add_subcommand(
      "edit", "Edit a file in $VISUAL/$EDITOR; saved only if it still splits into entries");
  CLI::App* memory_add = memory_cmd->add_subcommand("add", "Add an entry");
  memory_add->add_option("text", memory_opts.text, "the entry")->required();
  CLI::App* memory_remove =
      memory_cmd->add_subcommand("remove", "Remove the one entry containing TEXT");
  memory_remove->add_option("text", memory_opts.text, "a substring of the entry")->required();
  CLI::App* memory_pending =
      memory_cmd->add_subcommand("pending", "Writes the agent staged for your approval");
  memory_pending->add_flag("--json", memory_opts.json, "print JSON");
  CLI::App* memory_approve = memory_cmd->add_subcommand("approve", "Apply a staged write");
  memory_approve->add_option("id", memory_opts.text, "its id (talaria memory pending)")->required();
  CLI::App* memory_reject = memory_cmd->add_subcommand("reject", "Drop a staged write");
  memory_reject->add_option("id", memory_opts.text, "its id (talaria memory pending)")->required();
  for (CLI::App* sub : {memory_show, memory_edit, memory_add, memory_remove}) {
    sub->add_option("--target", memory_opts.target, "memory (the agent's notes) or user")
        ->check(CLI::IsMember({"memory", "user"}));
  }

  cli::AuditOptions audit_opts;
  CLI::App* audit = app.add_subcommand(
      "audit", "The audit log ($TALARIA_HOME/audit.jsonl): every command judged and file changed");
  CLI::App* audit_verify = audit->add_subcommand(
      "verify",
      "Check the log's hash chain and its head record: an edited, removed or inserted line, or a\n"
      "cut-off end, is reported. Exit status: 0 intact, 1 tampered, 2 no log or unreadable");
  audit_verify->add_option("--file", audit_opts.file,
                           "the log to check (default: $TALARIA_HOME/audit.jsonl)");
  audit->require_subcommand(1);

  cli::CheckpointsOptions checkpoints_opts;
  CLI::App* checkpoints_cmd = app.add_subcommand(
      "checkpoints",
      "Snapshots taken before the agent changed a project (config checkpoints.enabled;\n"
      "$TALARIA_HOME/checkpoints). Exit status: 0 done, 1 failed, 2 usage errors");
  checkpoints_cmd->require_subcommand(1);
  CLI::App* checkpoints_list =
      checkpoints_cmd->add_subcommand("list", "The project's checkpoints, newest first");
  checkpoints_list->add_flag("--json", checkpoints_opts.json, "print JSON");
  CLI::App* checkpoints_diff = checkpoints_cmd->add_subcommand(
      "diff", "What changed from a checkpoint to the directory as it is now");
  checkpoints_diff->add_option("hash", checkpoints_opts.hash, "checkpoint hash (or a prefix)")
      ->required();
  CLI::App* checkpoints_restore = checkpoints_cmd->add_subcommand(
      "restore", "Put a checkpoint's files back (the present is checkpointed first)");
  checkpoints_restore->add_option("hash", checkpoints_opts.hash, "checkpoint hash (or a prefix)")
      ->required();
  checkpoints_restore->add_option("file", checkpoints_opts.file, "only this file");
  checkpoints_restore->add_flag("--json", checkpoints_opts.json, "print JSON");
  for (CLI::App* sub : {checkpoints_list, checkpoints_diff, checkpoints_restore}) {
    sub->add_option("--dir", checkpoints_opts.dir,
                    "the project directory (default: the project of the current directory)");
  }

  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? cli::kExitOk : cli::kExitUsage;
  }

  if (check->parsed()) return cli::RunCheckCommand(check_opts);
  if (trust->parsed()) return cli::RunTrust(trust_opts);
  if (audit_verify->parsed()) return cli::RunAuditVerify(audit_opts);
  if (browser_daemon->parsed()) {
    daemon_opts.config_path = config_path;
    return cli::RunBrowserDaemon(daemon_opts);
  }
  if (sessions->parsed()) {
    for (CLI::App* sub : sessions->get_subcommands()) sessions_opts.action = sub->get_name();
    return cli::RunSessions(sessions_opts);
  }

  RuntimeOptions options;
  options.config_path = config_path;
  auto rt = Runtime::Create(options);
  if (!rt) {
    std::fprintf(stderr, "talaria: %s\n", rt.error().message().c_str());
    return cli::kExitUsage;
  }
  for (const std::string& warning : (*rt)->config().warnings) {
    std::fprintf(stderr, "talaria: warning: %s\n", warning.c_str());
  }
  if (plugins->parsed()) return cli::RunPlugins(**rt, plugins_opts);
  if (checkpoints_cmd->parsed()) {
    for (CLI::App* sub : checkpoints_cmd->get_subcommands()) {
      checkpoints_opts.action = sub->get_name();
    }
    return cli::RunCheckpoints(**rt, checkpoints_opts);
  }
  if (memory_cmd->parsed()) {
    for (CLI::App* sub : memory_cmd->get_subcommands()) memory_opts.action = sub->get_name();
    return cli::RunMemoryCommand((*rt)->config(), memory_opts);
  }
  // Every other command sees the plugins' and the MCP servers' tools; a server is waited for
  // (at most its connect timeout) except by `mcp`, which announces tools as they arrive.
  cli::ExtensionOptions extension_options;
  if (mcp->parsed()) {
    mcp_opts.features = std::make_shared<mcp::ServerFeatures>();
    extension_options.features = mcp_opts.features.get();
    extension_options.plugin_dirs = mcp_opts.plugin_dirs;
  }
  const std::unique_ptr<cli::Extensions> extensions = cli::LoadExtensions(
      **rt, /*wait_for_mcp=*/!mcp->parsed(), std::chrono::seconds(60), extension_options);
  if (tools->parsed()) {
    tools_opts.toolsets = SplitCommas(tools_toolsets);
    return cli::RunTools(**rt, tools_opts);
  }
  if (toolsets->parsed()) return cli::RunToolsets(**rt);
  if (call->parsed()) {
    call_opts.config_path = config_path;
    return cli::RunCall(**rt, call_opts);
  }
  if (batch->parsed()) return cli::RunBatch(**rt, batch_opts);
  if (run->parsed()) {
    run_opts.agent.toolsets = SplitCommas(run_toolsets);
    return cli::RunAgentTask(**rt, run_opts);
  }
  if (chat->parsed()) {
    chat_opts.agent.toolsets = SplitCommas(chat_toolsets);
    return cli::RunChat(**rt, chat_opts);
  }
  if (mcp->parsed()) {
    mcp_opts.toolsets = SplitCommas(mcp_toolsets);
    return cli::RunMcp(**rt, mcp_opts);
  }
  return cli::kExitUsage;
}
