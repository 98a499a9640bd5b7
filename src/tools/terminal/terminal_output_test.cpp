// Output cleaning and exit-code meanings.
#include "tools/terminal/terminal_output.h"

#include <gtest/gtest.h>

namespace talaria::tools {
namespace {

TEST(StripAnsi, RemovesEscapeSequencesAndStrayControls) {
  EXPECT_EQ(StripAnsi("\x1b[1;31merror\x1b[0m: x"), "error: x");
  EXPECT_EQ(StripAnsi("\x1b]0;window title\x07prompt$ "), "prompt$ ");
  EXPECT_EQ(StripAnsi("\x1b]8;;https://x\x1b\\link\x1b]8;;\x1b\\"), "link");
  EXPECT_EQ(StripAnsi("a\x1b(Bb\x1b=c"), "abc");
  EXPECT_EQ(StripAnsi("tab\there\r\nbell\x07\x08!"), "tab\there\r\nbell!");
  EXPECT_EQ(StripAnsi("cut at the end \x1b["), "cut at the end ");
  EXPECT_EQ(StripAnsi("caf\xC3\xA9"), "caf\xC3\xA9");
}

TEST(CleanOutput, StripsThenRedacts) {
  EXPECT_EQ(CleanOutput("\x1b[32mTOKEN=abcdef123456\x1b[0m"), "TOKEN=[REDACTED]");
}

TEST(ExitCodeMeaning, KnowsTheUsualNonErrors) {
  EXPECT_EQ(ExitCodeMeaning("grep foo file.txt", 1), "No matches found (not an error)");
  EXPECT_EQ(ExitCodeMeaning("cat x | grep -q 'a|b'", 1), "No matches found (not an error)");
  EXPECT_EQ(ExitCodeMeaning("cd src && sudo /usr/bin/diff a b", 1), "Files differ (not an error)");
  EXPECT_EQ(ExitCodeMeaning("timeout 5s curl http://x", 28), "Operation timed out");
  EXPECT_EQ(ExitCodeMeaning("LANG=C rg pattern", 1), "No matches found (not an error)");
  EXPECT_EQ(ExitCodeMeaning("nosuchcmd", 127), "Command not found");
  EXPECT_EQ(ExitCodeMeaning("grep foo f", 0), std::nullopt);
  EXPECT_EQ(ExitCodeMeaning("grep foo f", 2), std::nullopt);
  EXPECT_EQ(ExitCodeMeaning("make", 1), std::nullopt);
  EXPECT_EQ(ExitCodeMeaning("echo 'grep'; false", 1), std::nullopt);
}

// The last program is found by the guard's shell parser, not by splitting on characters.
TEST(ExitCodeMeaning, FindsTheLastProgramWithTheShellParser) {
  EXPECT_EQ(ExitCodeMeaning("cd x && grep foo bar", 1), "No matches found (not an error)");
  EXPECT_EQ(ExitCodeMeaning("echo \"a | diff\" ; grep x y", 1), "No matches found (not an error)");
  EXPECT_EQ(ExitCodeMeaning("grep x y; echo \"a | diff\"", 1), std::nullopt);
  EXPECT_EQ(ExitCodeMeaning("if true; then diff a b; fi", 1), "Files differ (not an error)");
  EXPECT_EQ(ExitCodeMeaning("x=$(grep a b) diff c d", 1), "Files differ (not an error)");
  EXPECT_EQ(ExitCodeMeaning("nice -n 5 stdbuf -oL grep a b", 1), "No matches found (not an error)");
  EXPECT_EQ(ExitCodeMeaning("grep 'unterminated", 1), std::nullopt);
}

}  // namespace
}  // namespace talaria::tools
