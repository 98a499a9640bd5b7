// write_file through the dispatcher on a real workspace: creation, conventions of an existing
// file kept, refusals before the file is touched, the staleness warning, the lint delta, the
// audit record and the workspace boundary.
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "talaria/base/sha256.h"
#include "talaria/core/registry.h"
#include "talaria/lint/lint.h"
#include "tools/files/file_tool_fixture.h"

namespace talaria::tools {
namespace {

namespace fs = std::filesystem;

class WriteFileTool : public testing::FileToolTest {
 protected:
  Json WriteTool(const std::string& path, const std::string& content) {
    return Call("write_file", {{"path", path}, {"content", content}});
  }
  // No temp file of an atomic write may be left behind anywhere under the root.
  void ExpectNoTempFiles() const {
    for (const auto& e : fs::recursive_directory_iterator(root_)) {
      EXPECT_EQ(e.path().filename().string().find(".talaria-tmp"), std::string::npos) << e.path();
    }
  }
};

TEST_F(WriteFileTool, IsRegisteredDestructiveInTheFileToolset) {
  auto entry = Registry::Global().GetEntry("write_file");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->toolset(), "file");
  EXPECT_TRUE(entry->annotations().destructive);
  EXPECT_FALSE(entry->annotations().read_only);
  EXPECT_EQ(entry->path_access(), PathAccess::kWrite);
  EXPECT_EQ(Json::parse(entry->schema_text())["parameters"]["required"],
            Json::array({"path", "content"}));
}

TEST_F(WriteFileTool, CreatesParentsWritesAndVerifies) {
  const std::string content = "def f():\n    return 1\n";
  Json r = WriteTool("pkg/sub/mod.py", content);
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(Read("pkg/sub/mod.py"), content);
  EXPECT_EQ(r["bytes_written"], content.size());
  EXPECT_EQ(r["dirs_created"], Json::array({root_ + "/pkg", root_ + "/pkg/sub"}));
  EXPECT_EQ(r["verified"], true);
  EXPECT_EQ(r["resolved_path"], root_ + "/pkg/sub/mod.py");
  EXPECT_EQ(r["files_modified"], Json::array({root_ + "/pkg/sub/mod.py"}));
  EXPECT_EQ(r["lint"]["status"], "ok");
  EXPECT_FALSE(r.contains("_warning"));
  ExpectNoTempFiles();
}

TEST_F(WriteFileTool, ReplacingKeepsCrlfBomAndMode) {
  Write("win.txt", "\xEF\xBB\xBFone\r\ntwo\r\n");
  ASSERT_EQ(::chmod((root_ + "/win.txt").c_str(), 0640), 0);
  Json r = WriteTool("win.txt", "uno\ndos\ntres\n");
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(Read("win.txt"), "\xEF\xBB\xBFuno\r\ndos\r\ntres\r\n");
  struct stat st {};
  ASSERT_EQ(::stat((root_ + "/win.txt").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 07777, 0640u);
  // An LF file stays LF, and content already in CRLF is not doubled.
  Write("unix.txt", "a\nb\n");
  WriteTool("unix.txt", "c\nd\n");
  EXPECT_EQ(Read("unix.txt"), "c\nd\n");
  WriteTool("win.txt", "x\r\ny\r\n");
  EXPECT_EQ(Read("win.txt"), "\xEF\xBB\xBFx\r\ny\r\n");
}

TEST_F(WriteFileTool, StructuredContentThatDoesNotParseIsRefusedBeforeTouchingTheFile) {
  Write("conf.json", "{\"ok\": true}\n");
  for (const auto& [path, bad] : std::vector<std::pair<std::string, std::string>>{
           {"conf.json", "{\"ok\": tru"},
           {"conf.yaml", "a: [1, 2\n"},
           {"conf.toml", "a = \n"},
       }) {
    Json r = WriteTool(path, bad);
    ASSERT_TRUE(r.contains("error")) << path << ": " << r.dump();
    EXPECT_FALSE(last_.ok());
  }
  EXPECT_EQ(Read("conf.json"), "{\"ok\": true}\n");
  EXPECT_FALSE(Exists("conf.yaml"));
  EXPECT_FALSE(Exists("conf.toml"));
  EXPECT_TRUE(AuditLines().empty());
}

TEST_F(WriteFileTool, ContentThatLooksLikeReadFileOutputIsRefused) {
  Write("a.py", "x = 1\n");
  Json r = WriteTool("a.py", "1|x = 1\n2|y = 2\n3|z = 3\n");
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_NE(r["error"].get<std::string>().find("read_file output"), std::string::npos);
  EXPECT_EQ(Read("a.py"), "x = 1\n");
}

TEST_F(WriteFileTool, WarnsWhenTheFileChangedSinceThisSessionReadIt) {
  Write("a.txt", "v1\n");
  ASSERT_TRUE(Call("read_file", {{"path", "a.txt"}}).contains("content"));
  Write("a.txt", "v2 from someone else\n");
  Json r = WriteTool("a.txt", "mine\n");
  ASSERT_TRUE(r.contains("_warning")) << r.dump();
  EXPECT_NE(r["_warning"].get<std::string>().find("modified since you last read it"),
            std::string::npos);
  EXPECT_EQ(Read("a.txt"), "mine\n");
  // Our own write is what we last saw: writing again does not warn.
  r = WriteTool("a.txt", "mine again\n");
  EXPECT_FALSE(r.contains("_warning")) << r.dump();
}

TEST_F(WriteFileTool, LintReportsOnlyErrorsTheWriteIntroduced) {
  Json r = WriteTool("bad.py", "def f(:\n    pass\n");
  ASSERT_FALSE(r.contains("error")) << r.dump();
  EXPECT_EQ(r["lint"]["status"], "error");
  EXPECT_NE(r["lint"]["output"].get<std::string>().find("line 1"), std::string::npos) << r.dump();
  // Same broken line, something appended below it: nothing new.
  r = WriteTool("bad.py", "def f(:\n    pass\nx = 1\n");
  EXPECT_EQ(r["lint"]["status"], "error");
  EXPECT_EQ(r["lint"]["message"], std::string(kPreexistingLintMessage)) << r.dump();
  // Files without a linter say so.
  r = WriteTool("notes.txt", "anything");
  EXPECT_EQ(r["lint"]["status"], "skipped");
}

TEST_F(WriteFileTool, EveryMutationIsAuditedWithHashes) {
  Write("a.txt", "old\n");
  WriteTool("a.txt", "new\n");
  auto lines = AuditLines();
  ASSERT_EQ(lines.size(), 1u);
  EXPECT_EQ(lines[0]["tool"], "write_file");
  EXPECT_EQ(lines[0]["session"], "s1");
  EXPECT_EQ(lines[0]["path"], root_ + "/a.txt");
  EXPECT_EQ(lines[0]["bytes"], 4);
  EXPECT_EQ(lines[0]["sha256_before"], Sha256Hex("old\n"));
  EXPECT_EQ(lines[0]["sha256_after"], Sha256Hex("new\n"));
  EXPECT_EQ(lines[0]["outcome"], "ok");
  WriteTool("fresh.txt", "x");
  lines = AuditLines();
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_TRUE(lines[1]["sha256_before"].is_null());
}

TEST_F(WriteFileTool, NothingLandsOutsideTheRootOrInProtectedFiles) {
  fs::create_directories(base_ + "/outside");
  fs::create_directory_symlink(base_ + "/outside", root_ + "/linkdir");
  std::ofstream(base_ + "/outside/target.txt") << "keep\n";
  fs::create_symlink(base_ + "/outside/target.txt", root_ + "/linkfile.txt");
  fs::create_symlink(base_ + "/outside/dangling.txt", root_ + "/dangling.txt");
  Write(".git/config", "[core]\n");
  const std::vector<std::string> paths = {
      "../escape.txt",         base_ + "/escape.txt",  "linkdir/evil.txt",
      "linkfile.txt",          "dangling.txt",         ".git/config",
      ".git/hooks/pre-commit", std::string("a\0b", 3), std::string(5000, 'a')};
  for (const std::string& path : paths) {
    Json r = WriteTool(path, "pwned\n");
    EXPECT_TRUE(r.contains("error")) << path.substr(0, 80) << ": " << r.dump();
    EXPECT_EQ(r.dump().find(root_ + "\""), std::string::npos) << "roots are never revealed";
  }
  EXPECT_EQ(ReadAbsolute(base_ + "/outside/target.txt"), "keep\n");
  EXPECT_FALSE(fs::exists(base_ + "/escape.txt"));
  EXPECT_FALSE(fs::exists(base_ + "/outside/evil.txt"));
  EXPECT_FALSE(fs::exists(base_ + "/outside/dangling.txt"));
  EXPECT_EQ(Read(".git/config"), "[core]\n");
  EXPECT_FALSE(Exists(".git/hooks/pre-commit"));
  ExpectNoTempFiles();
}

}  // namespace
}  // namespace talaria::tools
