// Test-only fixture for the file tools: a real temp workspace (root `ws/` under a private base,
// so "outside the root" exists on disk), a session tracker, an audit log, and calls through the
// real dispatcher. Not thread-safe; one per test.
#pragma once

#include <gtest/gtest.h>
#include <stdlib.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "talaria/audit/audit_log.h"
#include "talaria/confinement/workspace.h"
#include "talaria/core/dispatcher.h"
#include "talaria/tools/session_services.h"
#include "tools/files/file_tracker.h"

namespace talaria::tools::testing {

class FileToolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    namespace fs = std::filesystem;
    std::string tmpl = (fs::temp_directory_path() / "talaria-file-tool-XXXXXX").string();
    ASSERT_NE(::mkdtemp(tmpl.data()), nullptr);
    base_ = fs::canonical(tmpl).string();
    root_ = base_ + "/ws";
    fs::create_directories(root_);
    safety::WorkspaceOptions options;
    options.roots = {root_};
    options.home = base_ + "/home";
    options.talaria_home = base_ + "/home/.talaria";
    options.durability = safety::Durability::kNone;
    auto ws = safety::Workspace::Open(options);
    ASSERT_TRUE(ws) << ws.error().ToString();
    EnsureServices(ctx_).workspace = *ws;
    ctx_.task_id = "t1";
    ctx_.session_id = "s1";
    tracker_ = std::make_shared<FileTracker>();
    ctx_.read_tracker = tracker_;
    auto log = safety::AuditLog::Open(base_ + "/audit.jsonl");
    ASSERT_TRUE(log) << log.error().ToString();
    EnsureServices(ctx_).audit_log = std::shared_ptr<const safety::AuditLog>(std::move(*log));
  }
  void TearDown() override {
    std::error_code ec;
    std::filesystem::remove_all(base_, ec);
  }

  // Writes `content` at `rel` under the root (parents created), bypassing the workspace.
  void Write(const std::string& rel, const std::string& content) const {
    const std::filesystem::path p = std::filesystem::path(root_) / rel;
    std::filesystem::create_directories(p.parent_path());
    std::ofstream(p, std::ios::binary | std::ios::trunc) << content;
  }
  std::string Read(const std::string& rel) const { return ReadAbsolute(root_ + "/" + rel); }
  static std::string ReadAbsolute(const std::string& path) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    return ss.str();
  }
  bool Exists(const std::string& rel) const {
    std::error_code ec;
    return std::filesystem::exists(
        std::filesystem::symlink_status(std::filesystem::path(root_) / rel, ec));
  }
  // Every regular file under the root, path -> content.
  std::map<std::string, std::string> Snapshot() const {
    std::map<std::string, std::string> out;
    for (const auto& e : std::filesystem::recursive_directory_iterator(root_)) {
      if (e.is_regular_file()) out[e.path().string()] = ReadAbsolute(e.path().string());
    }
    return out;
  }
  std::vector<Json> AuditLines() const {
    std::ifstream in(base_ + "/audit.jsonl");
    std::vector<Json> out;
    for (std::string line; std::getline(in, line);) out.push_back(Json::parse(line));
    return out;
  }

  // One call through the whole pipeline; the raw result is kept in last_.
  ToolResult CallRaw(std::string_view tool, const Json& args) {
    last_ = dispatcher_.Dispatch(tool, args.dump(), ctx_);
    return last_;
  }
  // The result as JSON; a trailing "[Hint: ...]" line some tools append is dropped.
  Json Call(std::string_view tool, const Json& args) {
    const std::string& text = CallRaw(tool, args).text;
    return Json::parse(text.substr(0, text.find("\n\n[Hint:")));
  }

  std::string base_;
  std::string root_;
  ToolContext ctx_;
  std::shared_ptr<FileTracker> tracker_;
  Dispatcher dispatcher_;
  ToolResult last_;
};

}  // namespace talaria::tools::testing
