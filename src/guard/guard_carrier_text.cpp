// Text a command will read as its program: heredocs, here-strings, the output of an `echo` or
// `printf` piped straight into it, and the content of a file written earlier in the same line
// (`cat > m.mk <<EOF ... EOF; make -f m.mk`). Carriers (at, ed, ex, database shells,
// debuggers, make) judge what they find here.
#include "guard/guard_internal.h"

namespace talaria::safety::guard {
namespace {

// What `c` prints, when it is echo/printf of literal words or a cat of a heredoc/here-string.
std::optional<std::string> PrintedText(const SimpleCommand& c) {
  for (const Redirection& r : c.redirections) {
    if (r.op == RedirectOp::kHeredoc) return r.heredoc_body;
    if (r.op == RedirectOp::kHereString) return r.target.text;
  }
  if (c.argv.empty()) return std::nullopt;
  const std::string_view up = Basename(c.argv[0].text);
  if (up != "echo" && up != "printf") return std::nullopt;
  std::string text;
  for (size_t i = 1; i < c.argv.size(); ++i) {
    if (up == "echo" && i == 1 && IsOption(c.argv[i].text)) continue;
    if (!text.empty()) text += ' ';
    std::string_view w = c.argv[i].text;
    // printf/echo -e escapes: a newline written as \n separates commands too.
    for (size_t k = 0; k < w.size(); ++k) {
      if (w[k] == '\\' && k + 1 < w.size() && w[k + 1] == 'n') {
        text += '\n';
        ++k;
      } else {
        text += w[k];
      }
    }
    if (up == "printf") break;
  }
  return text;
}

}  // namespace

std::vector<std::string> StdinTexts(const CommandView& v) {
  std::vector<std::string> out;
  if (v.cmd == nullptr) return out;
  for (const Redirection& r : v.cmd->redirections) {
    if (r.op == RedirectOp::kHeredoc) out.push_back(r.heredoc_body);
    if (r.op == RedirectOp::kHereString) out.push_back(r.target.text);
  }
  if (!v.cmd->stdin_piped || v.script == nullptr) return out;
  for (const SimpleCommand& c : v.script->commands) {
    if (c.pipeline != v.cmd->pipeline || c.pipe_pos + 1 != v.cmd->pipe_pos) continue;
    if (auto t = PrintedText(c)) out.push_back(std::move(*t));
  }
  return out;
}

namespace {

// "./x.sh" and "x.sh" name the same file.
bool SamePath(std::string_view a, std::string_view b) {
  while (a.starts_with("./")) a.remove_prefix(2);
  while (b.starts_with("./")) b.remove_prefix(2);
  return a == b;
}

// Whether `c` writes `path` through a redirection or as a `tee` operand.
bool RedirectsOrTeesTo(const SimpleCommand& c, std::string_view path) {
  for (const Redirection& r : c.redirections) {
    if (r.Writes() && SamePath(r.target.text, path)) return true;
  }
  if (!c.argv.empty() && Basename(c.argv[0].text) == "tee") {
    for (size_t i = 1; i < c.argv.size(); ++i) {
      if (SamePath(c.argv[i].text, path)) return true;
    }
  }
  return false;
}

}  // namespace

std::optional<std::string> WrittenEarlier(const CommandView& v, std::string_view path) {
  if (v.script == nullptr || v.cmd == nullptr || path.empty()) return std::nullopt;
  const SimpleCommand* self = v.cmd;
  for (const SimpleCommand& c : v.script->commands) {
    if (&c == self) break;
    if (!RedirectsOrTeesTo(c, path)) continue;
    if (auto t = PrintedText(c)) return t;
    // Written by a pipe from an echo (echo x | tee f) or from something unknown.
    for (const SimpleCommand& up : v.script->commands) {
      if (c.stdin_piped && up.pipeline == c.pipeline && up.pipe_pos + 1 == c.pipe_pos) {
        if (auto t = PrintedText(up)) return t;
      }
    }
    return std::string();
  }
  return std::nullopt;
}

namespace {

bool IsDownloader(const SimpleCommand& c) {
  for (size_t i = 0; i < c.argv.size() && i < 4; ++i) {  // past sudo, env, timeout 5, ...
    const std::string_view n = Basename(c.argv[i].text);
    if (n == "curl" || n == "wget" || n == "fetch" || n == "aria2c" || n == "http" ||
        n == "https" || n == "xh" || n == "lynx") {
      return true;
    }
  }
  return false;
}

}  // namespace

bool DownloadedEarlier(const CommandView& v, std::string_view path) {
  if (v.script == nullptr || v.cmd == nullptr || path.empty()) return false;
  const std::string_view base = Basename(path);
  const SimpleCommand* self = v.cmd;
  for (const SimpleCommand& c : v.script->commands) {
    if (&c == self) break;
    bool writes = RedirectsOrTeesTo(c, path);
    if (IsDownloader(c)) {
      // -o FILE / -O FILE / --output=FILE, or wget's default name: the URL's last segment.
      for (size_t i = 1; i < c.argv.size(); ++i) {
        std::string_view t = c.argv[i].text;
        const size_t eq = t.find('=');
        if (t.starts_with("--") && eq != std::string_view::npos) t = t.substr(eq + 1);
        if (t.starts_with("-o") && t.size() > 2 && t[2] != '-') t = t.substr(2);
        if (SamePath(t, path)) writes = true;
        if (t.find("://") != std::string_view::npos && !base.empty()) {
          std::string_view url = t.substr(0, t.find_first_of("?#"));
          writes = writes || (url.ends_with(base) && url.size() > base.size() &&
                              url[url.size() - base.size() - 1] == '/');
        }
      }
      if (writes) return true;
      continue;
    }
    if (!writes) continue;
    // Written by a pipe from a download (curl URL | tee x.sh, curl URL > x.sh is above).
    for (const SimpleCommand& up : v.script->commands) {
      if (c.stdin_piped && up.pipeline == c.pipeline && up.pipe_pos < c.pipe_pos &&
          IsDownloader(up)) {
        return true;
      }
    }
  }
  return false;
}

}  // namespace talaria::safety::guard
