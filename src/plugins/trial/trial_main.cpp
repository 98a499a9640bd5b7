// talaria-plugin-trial: loads plugins in a throwaway process before talaria loads them in its
// own, so one that crashes, exits or hangs while loading or registering is found without harm
// to the host (src/plugins/plugin_trial.h runs it).
//
// stdin: the candidates' paths, each ended by a NUL byte. For each, in order: dlopen
// (RTLD_NOW | RTLD_LOCAL, as the host will), the entry point called with a host that reads every
// definition the way the real host does and accepts it, then "done <index>\n" on the protocol
// descriptor ("ready\n" comes first, once the list is read). What a plugin does short of dying
// (a dlopen error, a refusal, an exception) is not judged here: the real load reports it. The
// protocol descriptor is number 3, a pipe of its own (close-on-exec here), so nothing a plugin
// prints on stdout or stderr can forge a line.
#include <dlfcn.h>
#include <fcntl.h>
#include <poll.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <csignal>

#include <algorithm>
#include <cerrno>
#include <cstddef>
#include <cstdio>
#include <cstring>
#include <string>
#include <string_view>

#include "talaria/plugin.h"

namespace {

// Where the lengths of the plugin's strings go, so the compiler cannot drop the reads.
volatile size_t touched_bytes = 0;

// Touches a plugin's string the way the host's copy would (a bad pointer faults here too).
void Touch(const char* text) {
  if (text != nullptr) touched_bytes = touched_bytes + ::strlen(text);
}

// Copies the plugin's struct as the host does: at most the host's size of it.
template <typename Def>
bool Copy(const Def* def, Def& out) {
  if (def == nullptr) return false;
  std::memcpy(&out, def, std::min<size_t>(def->struct_size, sizeof out));
  return true;
}

int TrialRegisterTool(void*, const talaria_tool_def* def) {
  talaria_tool_def d{};
  if (!Copy(def, d)) return TALARIA_PLUGIN_INVALID_ARGUMENT;
  Touch(d.name);
  Touch(d.toolset);
  Touch(d.schema_json);
  if (def->struct_size >= offsetof(talaria_tool_def, emoji) + sizeof(d.emoji)) Touch(d.emoji);
  return TALARIA_PLUGIN_OK;
}

int TrialRegisterResource(void*, const talaria_resource_def* def) {
  talaria_resource_def d{};
  if (!Copy(def, d)) return TALARIA_PLUGIN_INVALID_ARGUMENT;
  Touch(d.toolset);
  Touch(d.resource_json);
  return TALARIA_PLUGIN_OK;
}

int TrialRegisterPrompt(void*, const talaria_prompt_def* def) {
  talaria_prompt_def d{};
  if (!Copy(def, d)) return TALARIA_PLUGIN_INVALID_ARGUMENT;
  Touch(d.toolset);
  Touch(d.prompt_json);
  return TALARIA_PLUGIN_OK;
}

void TrialSetError(void*, const char* message) { Touch(message); }
void TrialLog(void*, int, const char* message) { Touch(message); }

std::string ReadAll(int fd) {
  std::string out;
  char buffer[1 << 14];
  for (;;) {
    const ssize_t n = ::read(fd, buffer, sizeof buffer);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return out;
    out.append(buffer, static_cast<size_t>(n));
  }
}

bool WriteLine(int fd, const std::string& line) {
  size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    done += static_cast<size_t>(n);
  }
  return true;
}

void TryOne(const std::string& path, std::string_view name) {
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) return;  // the real load reports dlopen's error
  const auto* version =
      static_cast<const uint32_t*>(::dlsym(handle, TALARIA_PLUGIN_VERSION_SYMBOL));
  auto entry =
      reinterpret_cast<talaria_register_tools_fn>(::dlsym(handle, TALARIA_PLUGIN_ENTRY_SYMBOL));
  if (version == nullptr || *version != TALARIA_PLUGIN_INTERFACE_VERSION || entry == nullptr)
    return;
  const std::string plugin_name(name);
  talaria_plugin_host host{};
  host.interface_version = TALARIA_PLUGIN_INTERFACE_VERSION;
  host.struct_size = sizeof host;
  host.plugin_name = plugin_name.c_str();
  host.register_tool = &TrialRegisterTool;
  host.set_error = &TrialSetError;
  host.log = &TrialLog;
  host.register_resource = &TrialRegisterResource;
  host.register_prompt = &TrialRegisterPrompt;
  try {
    (void)entry(&host);
  } catch (...) {  // the host catches it too; only dying counts here
  }
}

std::string_view PluginName(std::string_view path) {
  std::string_view name = path.substr(path.rfind('/') + 1);
  if (name.ends_with(".so")) name.remove_suffix(3);
  return name;
}

}  // namespace

int main() {
  constexpr int protocol = 3;
  if (::fcntl(protocol, F_SETFD, FD_CLOEXEC) != 0) {
    std::fputs("talaria-plugin-trial: run by talaria: descriptor 3 must be the verdict pipe\n",
               stderr);
    return 2;
  }
  // A plugin that never returns must not outlive talaria: SIGKILL when the parent goes. A
  // parent that went before this line has closed the verdict pipe's other end.
  if (::prctl(PR_SET_PDEATHSIG, SIGKILL) != 0) return 3;
  pollfd peer{protocol, 0, 0};
  if (::poll(&peer, 1, 0) != 0) return 3;  // POLLERR: nobody reads the verdicts any more
  const std::string input = ReadAll(STDIN_FILENO);
  if (!WriteLine(protocol, "ready\n")) return 3;
  size_t index = 0;
  for (size_t start = 0; start < input.size(); ++index) {
    size_t end = input.find('\0', start);
    if (end == std::string::npos) end = input.size();
    const std::string path = input.substr(start, end - start);
    start = end + 1;
    TryOne(path, PluginName(path));
    std::fflush(nullptr);  // what the plugin printed reaches stderr before its verdict
    if (!WriteLine(protocol, "done " + std::to_string(index) + "\n")) return 3;
  }
  return 0;
}
