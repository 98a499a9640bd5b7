#include "cli/client_roots.h"

#include <algorithm>
#include <filesystem>
#include <system_error>

#include "talaria/base/log.h"

namespace talaria::cli {
namespace {

// Resolves symlinks and "..": a client root that is a link to somewhere else is judged by where
// it leads. Empty when the path does not exist.
std::string Canonical(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::canonical(path, ec);
  return ec ? std::string() : p.string();
}

bool IsWithin(const std::string& path, const std::string& dir) {
  if (dir == "/") return true;
  return path == dir || (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

}  // namespace

ClientRoots::ClientRoots(std::shared_ptr<tools::Session> session, std::vector<std::string> allowed)
    : session_(std::move(session)) {
  if (allowed.empty()) allowed.push_back(std::filesystem::current_path().string());
  for (const std::string& dir : allowed) {
    if (std::string c = Canonical(dir); !c.empty()) allowed_.push_back(std::move(c));
  }
}

void ClientRoots::Update(const std::vector<std::string>& client_paths) {
  std::vector<std::string> inside;
  for (const std::string& path : client_paths) {
    const std::string c = Canonical(path);
    const bool ok = !c.empty() && std::any_of(allowed_.begin(), allowed_.end(),
                                               [&c](const std::string& dir) { return IsWithin(c, dir); });
    if (ok) {
      inside.push_back(c);
    } else {
      LogWarn("talaria mcp: ignoring the client's root " + path +
              " (missing, or outside the --root directories)");
    }
  }
  std::shared_ptr<tools::Session> narrowed;
  if (!inside.empty()) {
    auto session = session_->Narrowed(std::move(inside));
    if (session) {
      narrowed = std::move(*session);
    } else {
      LogWarn("talaria mcp: the client's roots are not usable: " + session.error().message());
    }
  }
  std::lock_guard lock(mu_);
  narrowed_ = std::move(narrowed);
}

ToolContext ClientRoots::NewContext(std::string call_id) const {
  std::shared_ptr<tools::Session> session;
  {
    std::lock_guard lock(mu_);
    session = narrowed_ ? narrowed_ : session_;
  }
  return session->NewContext(std::move(call_id));
}

}  // namespace talaria::cli
