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
  return path == dir ||
         (path.size() > dir.size() && path.starts_with(dir) && path[dir.size()] == '/');
}

}  // namespace

ClientRoots::ClientRoots(std::shared_ptr<tools::Session> session, std::vector<std::string> allowed)
    : session_(std::move(session)) {
  if (allowed.empty()) allowed.push_back(std::filesystem::current_path().string());
  for (const std::string& dir : allowed) {
    if (std::string c = Canonical(dir); !c.empty()) allowed_.push_back(std::move(c));
  }
}

Status ClientRoots::Update(const std::vector<std::string>& client_paths) {
  std::vector<std::string> inside;
  const auto keep = [&inside](const std::string& dir) {
    if (std::find(inside.begin(), inside.end(), dir) == inside.end()) inside.push_back(dir);
  };
  for (const std::string& path : client_paths) {
    const std::string c = Canonical(path);
    bool met = false;
    for (const std::string& dir : allowed_) {
      if (c.empty()) break;
      if (IsWithin(c, dir)) {
        keep(c);
        met = true;
        break;
      }
      if (IsWithin(dir, c)) {  // the client's root holds this --root directory
        keep(dir);
        met = true;
      }
    }
    if (!met) {
      LogWarn("talaria mcp: ignoring the client's root " + path +
              " (missing, or outside the --root directories)");
    }
  }
  std::shared_ptr<tools::Session> narrowed;
  Status status;
  if (!inside.empty()) {
    auto session = session_->Narrowed(std::move(inside));
    if (session) {
      narrowed = std::move(*session);
    } else {
      status = FailedPreconditionError("the client's roots are not usable: " +
                                       session.error().message());
    }
  } else if (!client_paths.empty()) {
    std::string named;
    for (const std::string& path : client_paths) named += (named.empty() ? "" : ", ") + path;
    std::string allowed;
    for (const std::string& dir : allowed_) allowed += (allowed.empty() ? "" : ", ") + dir;
    status = PermissionDeniedError("none of the client's roots (" + named +
                                   ") lies inside the server's --root (" + allowed +
                                   "), so no call may run; offer a root inside it");
  }
  if (!status.ok()) LogWarn("talaria mcp: " + status.message());
  std::lock_guard lock(mu_);
  narrowed_ = std::move(narrowed);
  return status;
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
