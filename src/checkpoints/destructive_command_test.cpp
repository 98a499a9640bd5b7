// IsDestructiveCommand, table-driven: what the original snapshots before, judged on the parsed
// command (so quoting, wrappers and substitutions do not hide a delete).
#include <gtest/gtest.h>

#include "talaria/checkpoints/checkpoint_store.h"

namespace talaria::checkpoints {
namespace {

TEST(DestructiveCommand, FlagsCommandsThatDestroyFiles) {
  for (const char* command : {"rm -rf build",
                              "rmdir empty",
                              "mv a b",
                              "cp new old",
                              "install -m 644 a /tmp/b",
                              "truncate -s 0 f",
                              "dd if=/dev/zero of=disk.img",
                              "shred secret",
                              "unlink f",
                              "sed -i 's/a/b/' f",
                              "sed -i.bak 's/a/b/' f",
                              "sed --in-place 's/a/b/' f",
                              "sed -ni p f",
                              "perl -pi -e 's/a/b/' f",
                              "git reset --hard",
                              "git clean -fdx",
                              "git checkout -- .",
                              "git -C sub restore .",
                              "git stash",
                              "echo hi > notes.txt",
                              "cat a >| b",
                              "ls &> out.txt",
                              "sudo rm x",
                              "timeout 5 rm x",
                              "find . -name '*.o' -delete",
                              "find . -exec rm {} ;",
                              "echo $(rm x)",
                              "(cd sub && mv a b)",
                              "xargs rm < list",
                              "r\\m file",
                              "'rm' file",
                              "if true; then rm f; fi",
                              "echo 'unterminated"}) {
    EXPECT_TRUE(IsDestructiveCommand(command)) << command;
  }
}

TEST(DestructiveCommand, LeavesReadsAndAppendsAlone) {
  for (const char* command :
       {"ls -la", "cat file", "grep -r rm .", "echo 'rm -rf /'", "git status", "git diff",
        "git log --oneline", "sed 's/a/b/' f", "sed -e 's/i/j/' f", "echo hi >> log.txt",
        "make 2>/dev/null", "cmd > /dev/null 2>&1", "echo err >&2", "find . -name '*.o'",
        "python3 -c 'print(1)'", "npm test", ""}) {
    EXPECT_FALSE(IsDestructiveCommand(command)) << command;
  }
}

}  // namespace
}  // namespace talaria::checkpoints
