// read_file through the dispatcher on a real workspace: the gutter and paging, decoding, binary
// refusal, the safety limit, "File not found" suggestions, the dedup stub and the
// consecutive-read guard, and the workspace boundary.
#include <gtest/gtest.h>
#include <fstream>

#include <filesystem>
#include <string>

#include "talaria/core/registry.h"
#include "tools/files/file_tool_fixture.h"

namespace talaria::tools {
namespace {

namespace fs = std::filesystem;

class ReadFileTool : public testing::FileToolTest {
 protected:
  Json Read(const Json& args) { return Call("read_file", args); }
  // Another registry tool resets the consecutive-read streak (agent-loop tools never reach it).
  void OtherTool() {
    Call("write_file", {{"path", "other.txt"}, {"content", "x"}});
    ASSERT_TRUE(last_.ok()) << last_.text;
  }
};

std::string Lines(int n, const std::string& stem = "line") {
  std::string out;
  for (int i = 1; i <= n; ++i) out += stem + std::to_string(i) + "\n";
  return out;
}

TEST_F(ReadFileTool, IsRegisteredReadOnlyInTheFileToolset) {
  auto entry = Registry::Global().GetEntry("read_file");
  ASSERT_NE(entry, nullptr);
  EXPECT_EQ(entry->toolset(), "file");
  EXPECT_TRUE(entry->annotations().read_only);
  EXPECT_EQ(entry->parallel(), ParallelClass::kPathScoped);
  const Json params = Json::parse(entry->schema_text())["parameters"];
  EXPECT_EQ(params["required"], Json::array({"path"}));
  EXPECT_EQ(params["properties"]["offset"]["default"], 1);
  EXPECT_EQ(params["properties"]["limit"]["default"], 500);
  EXPECT_EQ(params["properties"]["limit"]["maximum"], 2000);
}

TEST_F(ReadFileTool, ShowsAWindowWithTheGutterAndAContinuationHint) {
  Write("a.txt", Lines(10));
  // Strings, as the CLI's key=value sends them: coercion types them.
  Json r = Read({{"path", "a.txt"}, {"offset", "2"}, {"limit", "3"}});
  ASSERT_TRUE(r.contains("content")) << r.dump();
  EXPECT_EQ(r["content"], "2|line2\n3|line3\n4|line4");
  EXPECT_EQ(r["total_lines"], 10);
  EXPECT_EQ(r["file_size"], Lines(10).size());
  EXPECT_EQ(r["truncated"], true);
  EXPECT_EQ(r["hint"], "Use offset=5 to continue reading (showing 2-4 of 10 lines)");
}

TEST_F(ReadFileTool, WholeFileHasNoHintAndKeepsALastLineWithoutNewline) {
  Write("a.txt", "alpha\r\nbeta\ngamma");
  Json r = Read({{"path", "a.txt"}});
  EXPECT_EQ(r["content"], "1|alpha\n2|beta\n3|gamma");
  EXPECT_EQ(r["total_lines"], 3);
  EXPECT_FALSE(r.contains("hint"));
  EXPECT_FALSE(r.contains("truncated"));
}

// The first 8 KiB are read once for sniffing and reused as content: every size around that
// block, with a line cut by its edge, reads whole and in order.
TEST_F(ReadFileTool, FilesAroundTheFirstReadBlockReadWhole) {
  for (const size_t size : {size_t{8191}, size_t{8192}, size_t{8193}, size_t{3 * 8192 + 5}}) {
    std::string text;
    std::string expected;
    int line = 0;
    while (text.size() < size) {
      ++line;
      // 97-character lines never align with the block edge.
      std::string row =
          "row" + std::to_string(line) + std::string(90, static_cast<char>('a' + line % 26));
      row.resize(std::min(row.size(), size - text.size()));
      text += row;
      if (!expected.empty()) expected += '\n';
      expected += std::to_string(line) + "|" + row;
      if (text.size() < size) text += '\n';
    }
    ASSERT_EQ(text.size(), size);
    const std::string name = "f" + std::to_string(size) + ".txt";
    Write(name, text);
    Json r = Read({{"path", name}, {"limit", 2000}});
    ASSERT_TRUE(r.contains("content")) << size << ": " << r.dump().substr(0, 300);
    EXPECT_EQ(r["content"], expected) << size;
    EXPECT_EQ(r["total_lines"], line) << size;
    EXPECT_EQ(r["file_size"], size);
  }
  // A BOM with a body past the first block: stripped once, the rest intact.
  const std::string body = Lines(1500);
  Write("bom_big.txt", "\xEF\xBB\xBF" + body);
  Json r = Read({{"path", "bom_big.txt"}, {"offset", 1499}, {"limit", 5}});
  EXPECT_EQ(r["content"], "1499|line1499\n1500|line1500");
  EXPECT_EQ(Read({{"path", "bom_big.txt"}, {"limit", 1}})["content"], "1|line1");
}

TEST_F(ReadFileTool, EmptyFileAndOffsetPastTheEndAreExplained) {
  Write("empty.txt", "");
  Json r = Read({{"path", "empty.txt"}});
  EXPECT_EQ(r["content"], "");
  EXPECT_EQ(r["hint"], "File is empty (0 bytes).");
  Write("short.txt", Lines(3));
  r = Read({{"path", "short.txt"}, {"offset", 9}});
  EXPECT_EQ(r["total_lines"], 3);
  EXPECT_EQ(r["hint"], "Offset 9 is past the end of the file (3 lines).");
}

TEST_F(ReadFileTool, LimitAboveTheMaximumIsRefusedByValidation) {
  Write("a.txt", "x\n");
  Json r = Read({{"path", "a.txt"}, {"limit", 2001}});
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_NE(r.dump().find("limit"), std::string::npos);
  r = Read({{"path", "a.txt"}, {"offset", 0}});
  EXPECT_TRUE(r.contains("error")) << r.dump();
}

TEST_F(ReadFileTool, LongLinesAreClippedAtTwoThousandCharacters) {
  // Multi-byte characters: the clip counts characters, never splits one.
  std::string line;
  for (int i = 0; i < 2100; ++i) line += "\xC3\xA9";  // é
  Write("long.txt", line + "\nshort\n");
  Json r = Read({{"path", "long.txt"}});
  const std::string content = r["content"];
  std::string expected = "1|";
  for (int i = 0; i < 2000; ++i) expected += "\xC3\xA9";
  expected += "... [truncated]\n2|short";
  EXPECT_EQ(content, expected);
}

// Lines of at most 2,000 bytes are copied without counting characters: every length around the
// clip, in bytes and in characters, keeps or clips exactly as counting does, also for a line
// that spans the read blocks.
TEST_F(ReadFileTool, LinesAroundTheClipLengthAreClippedByCharacters) {
  const std::string x2000(2000, 'x');
  std::string e2000;
  for (int i = 0; i < 2000; ++i) e2000 += "\xC3\xA9";  // 2,000 characters in 4,000 bytes
  const std::string huge(70'000, 'y');                 // past the 8 KiB head and a 64 KiB block
  Write("edge.txt", x2000 + "\n" + x2000 + "x\n" + x2000 + "\r\n" + e2000 + "\n" + e2000 + "z\n" +
                        huge + "\nend");
  Json r = Read({{"path", "edge.txt"}});
  ASSERT_TRUE(r.contains("content")) << r.dump().substr(0, 300);
  const std::string expected = "1|" + x2000 + "\n2|" + x2000 + "... [truncated]\n3|" + x2000 +
                               "\n4|" + e2000 + "\n5|" + e2000 + "... [truncated]\n6|" +
                               std::string(2000, 'y') + "... [truncated]\n7|end";
  EXPECT_EQ(r["content"], expected);
  EXPECT_EQ(r["total_lines"], 7);
}

TEST_F(ReadFileTool, Utf8BomIsStrippedAndUtf16IsTranscoded) {
  Write("bom.txt", "\xEF\xBB\xBFhello\nworld\n");
  EXPECT_EQ(Read({{"path", "bom.txt"}})["content"], "1|hello\n2|world");
  // "hé\nok\n" in UTF-16LE with BOM, and in UTF-16BE.
  Write("le.txt", std::string("\xFF\xFEh\0\xE9\0\n\0o\0k\0\n\0", 14));
  EXPECT_EQ(Read({{"path", "le.txt"}})["content"], "1|h\xC3\xA9\n2|ok");
  Write("be.txt", std::string("\xFE\xFF\0h\0\xE9\0\n\0o\0k\0\n", 14));
  EXPECT_EQ(Read({{"path", "be.txt"}})["content"], "1|h\xC3\xA9\n2|ok");
}

TEST_F(ReadFileTool, BinaryFilesAreRefusedWithTheirTypeNamed) {
  Write("img.png", std::string("\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16));
  Json r = Read({{"path", "img.png"}});
  ASSERT_TRUE(r.contains("error")) << r.dump();
  EXPECT_NE(r["error"].get<std::string>().find("PNG image data"), std::string::npos);
  Write("blob.bin", std::string("abc\0def", 7));
  r = Read({{"path", "blob.bin"}});
  EXPECT_NE(r["error"].get<std::string>().find("binary data"), std::string::npos);
  EXPECT_FALSE(last_.ok());
}

TEST_F(ReadFileTool, AWindowOverTheSafetyLimitIsRefusedWithTheFileShape) {
  // 100 lines of 1,500 chars = 150,000 chars in one window.
  std::string text;
  for (int i = 0; i < 100; ++i) text.append(1500, 'x').push_back('\n');
  Write("big.txt", text);
  Json r = Read({{"path", "big.txt"}});
  ASSERT_TRUE(r.contains("error")) << r.dump().substr(0, 200);
  EXPECT_NE(r["error"].get<std::string>().find("safety limit"), std::string::npos);
  EXPECT_EQ(r["total_lines"], 100);
  // A smaller window of the same file is fine, and read_file never spills.
  r = Read({{"path", "big.txt"}, {"limit", 10}});
  EXPECT_EQ(r["total_lines"], 100);
  EXPECT_EQ(r["content"].get<std::string>().size(), 10u * 1500 + 9 * 2 + 3 + 9);
}

TEST_F(ReadFileTool, MissingFileSuggestsSimilarNames) {
  Write("src/config.yaml", "a: 1\n");
  Write("src/config.yml.bak", "a: 1\n");
  Write("src/other.txt", "x\n");
  Json r = Read({{"path", "src/confg.yaml"}});
  ASSERT_TRUE(r.contains("error"));
  EXPECT_EQ(r["error"], "File not found: src/confg.yaml");
  ASSERT_TRUE(r["similar_files"].is_array());
  ASSERT_FALSE(r["similar_files"].empty());
  EXPECT_NE(r["similar_files"][0].get<std::string>().find("config.yaml"), std::string::npos);
  EXPECT_LE(r["similar_files"].size(), 5u);
}

TEST_F(ReadFileTool, UnchangedReReadGetsAStubUntilTheFileChanges) {
  Write("a.txt", Lines(3));
  EXPECT_TRUE(Read({{"path", "a.txt"}}).contains("content"));
  OtherTool();
  Json stub = Read({{"path", "a.txt"}});
  EXPECT_EQ(stub["status"], "unchanged");
  EXPECT_EQ(stub["dedup"], true);
  EXPECT_FALSE(stub.contains("content"));
  // A different window of the same file is new content.
  EXPECT_TRUE(Read({{"path", "a.txt"}, {"limit", 2}}).contains("content"));
  // A rewrite on disk, even within the same clock tick, makes the region fresh again.
  Write("a.txt", Lines(5));
  Json fresh = Read({{"path", "a.txt"}});
  ASSERT_TRUE(fresh.contains("content")) << fresh.dump();
  EXPECT_EQ(fresh["total_lines"], 5);
}

TEST_F(ReadFileTool, AfterTwoStubsTheReReadIsBlockedUntilAWriteToThatPath) {
  Write("a.txt", Lines(3));
  EXPECT_TRUE(Read({{"path", "a.txt"}}).contains("content"));
  for (int stub = 1; stub <= 2; ++stub) {
    OtherTool();  // keeps the consecutive-read rule out of the way
    EXPECT_EQ(Read({{"path", "a.txt"}})["status"], "unchanged") << stub;
  }
  OtherTool();
  Json blocked = Read({{"path", "a.txt"}});
  ASSERT_TRUE(blocked.contains("error")) << blocked.dump();
  EXPECT_EQ(blocked["error"].get<std::string>().rfind("BLOCKED", 0), 0u);
  // This session's own write to the path resets its dedup state.
  ASSERT_TRUE(
      Call("write_file", {{"path", "a.txt"}, {"content", "new\n"}}).contains("bytes_written"));
  Json fresh = Read({{"path", "a.txt"}});
  EXPECT_EQ(fresh["content"], "1|new") << fresh.dump();
}

TEST_F(ReadFileTool, ThirdConsecutiveReadWarnsFourthIsBlockedOtherToolResets) {
  // The file changes between reads, so only the consecutive-read rule is in play.
  int version = 0;
  auto read_changed = [&] {
    Write("a.txt", Lines(++version));
    return Read({{"path", "a.txt"}});
  };
  EXPECT_FALSE(read_changed().contains("_warning"));
  EXPECT_FALSE(read_changed().contains("_warning"));
  Json third = read_changed();
  ASSERT_TRUE(third.contains("_warning")) << third.dump();
  EXPECT_TRUE(third.contains("content"));
  EXPECT_NE(third["_warning"].get<std::string>().find("3 times"), std::string::npos);
  Json fourth = read_changed();
  ASSERT_TRUE(fourth.contains("error")) << fourth.dump();
  EXPECT_EQ(fourth["error"].get<std::string>().rfind(
                "BLOCKED: You have read this exact file region 4 times", 0),
            0u);
  EXPECT_EQ(fourth["already_read"], 4);
  EXPECT_FALSE(last_.ok());

  // Another tool resets the streak: the next read is neither warned nor blocked.
  OtherTool();
  Json after = read_changed();
  EXPECT_FALSE(after.contains("_warning")) << after.dump();
  EXPECT_TRUE(after.contains("content")) << after.dump();
}

// A server whose callers are many conversations turns the guardrails off: every read of an
// unchanged file returns its content, while write_file still warns about a stale file.
TEST_F(ReadFileTool, WithReadGuardsOffEveryReReadReturnsTheContent) {
  tracker_ = std::make_shared<FileTracker>(ReadGuards::kOff);
  ctx_.read_tracker = tracker_;
  Write("a.txt", Lines(3));
  for (int i = 0; i < 10; ++i) {
    Json read = Read({{"path", "a.txt"}});
    ASSERT_TRUE(read.contains("content")) << i << ": " << read.dump();
    EXPECT_FALSE(read.contains("_warning")) << i;
  }
  Write("a.txt", Lines(4));  // behind the session's back
  Json written = Call("write_file", {{"path", "a.txt"}, {"content", "new\n"}});
  EXPECT_NE(written.dump().find("modified since"), std::string::npos) << written.dump();
}

TEST_F(ReadFileTool, ForgetReadsStartsTheGuardrailsOver) {
  Write("a.txt", Lines(3));
  EXPECT_TRUE(Read({{"path", "a.txt"}}).contains("content"));
  EXPECT_EQ(Read({{"path", "a.txt"}})["status"], "unchanged");
  tracker_->ForgetReads();  // the conversation's context was compacted
  Json again = Read({{"path", "a.txt"}});
  EXPECT_TRUE(again.contains("content")) << again.dump();
  EXPECT_FALSE(again.contains("_warning")) << again.dump();
}

TEST_F(ReadFileTool, ReadsOutsideTheRootAndSensitiveFilesAreRefused) {
  std::ofstream(base_ + "/secret.txt") << "top secret\n";
  fs::create_symlink(base_ + "/secret.txt", root_ + "/link.txt");
  Write(".env", "API_KEY=hunter2\n");
  const std::vector<std::string> paths = {"../secret.txt", base_ + "/secret.txt",
                                          "link.txt",      ".env",
                                          "/dev/zero",     "/proc/self/environ"};
  for (const std::string& path : paths) {
    const std::string text = CallRaw("read_file", {{"path", path}}).text;
    EXPECT_FALSE(last_.ok()) << path;
    EXPECT_EQ(text.find("top secret"), std::string::npos) << path;
    EXPECT_EQ(text.find("hunter2"), std::string::npos) << path;
    EXPECT_EQ(text.find(root_ + "\""), std::string::npos) << "roots are never revealed: " << text;
  }
}

TEST_F(ReadFileTool, AbsolutePathInsideTheRootIsAccepted) {
  Write("sub/a.txt", "hi\n");
  EXPECT_EQ(Read({{"path", root_ + "/sub/a.txt"}})["content"], "1|hi");
}

}  // namespace
}  // namespace talaria::tools
