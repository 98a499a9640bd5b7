#include "env/exec_shell_environment.h"

#include <string>
#include <vector>

#include "env/remote_script_session.h"
#include "env/remote_shell_scripts.h"
#include "talaria/base/strings.h"
#include "talaria/base/subprocess.h"

namespace talaria::env {
namespace {

using namespace std::chrono_literals;

constexpr auto kExecControlTimeout = 30s;

// docker exec sends its argv as JSON, which turns every byte that is not UTF-8 into U+FFFD. So
// the arguments travel as ASCII, other bytes (and backslash) as \0NNN, and this first line of
// every script decodes them (bash's printf %b; an argument cannot hold NUL anyway).
constexpr std::string_view kDecodeArgs =
    R"sh(__t_a=(); for __t_x; do printf -v __t_x '%b' "$__t_x"; __t_a+=("$__t_x"); done; set -- "${__t_a[@]}"; unset __t_a __t_x
)sh";

std::string EncodeArg(std::string_view arg) {
  std::string out;
  out.reserve(arg.size());
  for (const char ch : arg) {
    const auto c = static_cast<unsigned char>(ch);
    if (c >= 0x20 && c < 0x7f && c != '\\') {
      out += ch;
      continue;
    }
    constexpr char kOctal[] = "01234567";
    out += "\\0";
    out += kOctal[(c >> 6) & 7];
    out += kOctal[(c >> 3) & 7];
    out += kOctal[c & 7];
  }
  return out;
}

class ExecShellEnvironment final : public Environment {
 public:
  explicit ExecShellEnvironment(ExecClient client)
      : client_(std::move(client)),
        session_(
            [this](std::string_view script, const std::vector<std::string>& args, bool tty) {
              return Argv(script, args, tty ? ExecTty::kYes : ExecTty::kNo);
            },
            kExecControlTimeout) {}

  ~ExecShellEnvironment() override {
    if (client_.teardown) client_.teardown();
  }

  ExecShellEnvironment(const ExecShellEnvironment&) = delete;
  ExecShellEnvironment& operator=(const ExecShellEnvironment&) = delete;

  Status Prepare(const std::string& initial_cwd) {
    const InitAnswer answer = TALARIA_TRY(session_.Init(initial_cwd, kExecControlTimeout));
    if (answer.ready) return Status::Ok();
    const ProcessResult& r = answer.result;
    if (r.timed_out) return UnavailableError(client_.what + " does not answer");
    const std::string err(Trim(r.stderr_text));
    if (r.exit_code == kExitNoInitialDir) {
      return NotFoundError(client_.what + ": working directory '" + initial_cwd +
                           "' does not exist");
    }
    if (r.exit_code == 126 || r.exit_code == 127) {
      return UnavailableError(client_.what + " runs no bash: " + err);
    }
    return UnavailableError(client_.what + " does not run commands (exit " +
                            std::to_string(r.exit_code) +
                            "): " + (err.empty() ? std::string("no message") : err));
  }

  std::string_view kind() const override { return client_.kind; }
  std::string cwd() const override { return session_.cwd(); }

  Result<CommandOutcome> Run(std::string_view command, const CommandOptions& options) override {
    // Without a cwd report the client failed (the container is gone) or the script was
    // killed: the output says what it said.
    return session_.Run(command, options);
  }

  Result<StartedProcess> Start(std::string_view command, const CommandOptions& options,
                               const StartOptions& start) override {
    return session_.Start(command, options, start);
  }

 private:
  // The client running bash on `script` with `args` on the far side.
  std::vector<std::string> Argv(std::string_view script, const std::vector<std::string>& args,
                                ExecTty tty) const {
    std::vector<std::string> argv = client_.argv_prefix(tty);
    argv.insert(argv.end(), {"bash", "--noprofile", "--norc", "-c",
                             std::string(kDecodeArgs) + std::string(script), "talaria"});
    for (const std::string& arg : args) argv.push_back(EncodeArg(arg));
    return argv;
  }

  const ExecClient client_;
  RemoteScriptSession session_;
};

}  // namespace

Result<std::shared_ptr<Environment>> OpenExecShell(ExecClient client,
                                                   const std::string& initial_cwd) {
  // Owned from here: an error below runs the teardown.
  auto env = std::make_shared<ExecShellEnvironment>(std::move(client));
  TALARIA_RETURN_IF_ERROR(env->Prepare(initial_cwd));
  return std::shared_ptr<Environment>(std::move(env));
}

}  // namespace talaria::env
