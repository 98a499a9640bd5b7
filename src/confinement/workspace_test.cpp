// Resolution and read-side attack tests of the Workspace, on a real file system. Every test
// builds a fresh tree:
//   <tmp>/ws/            the root
//   <tmp>/ws_evil/       a sibling whose name extends the root's
//   <tmp>/outside/       a directory outside with a secret
//   <tmp>/home/          a fake $HOME (for the sensitive-path rules)
#include "talaria/confinement/workspace.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <chrono>

#include "support/safety_test_util.h"

namespace talaria::safety {
namespace {

using testing::Exists;
using testing::ReadFile;
using testing::TempDir;
using testing::WriteFile;

class WorkspaceTest : public ::testing::Test {
 protected:
  void SetUp() override {
    WriteFile(tmp_ / "ws/README.md", "hello\n");
    WriteFile(tmp_ / "ws/sub/inner.txt", "inner\n");
    WriteFile(tmp_ / "ws_evil/secret", "evil secret\n");
    WriteFile(tmp_ / "outside/secret", "outside secret\n");
    std::filesystem::create_directories(tmp_ / "home");
    std::filesystem::create_directories(tmp_ / "thome");
    root_ = tmp_ / "ws";
  }

  std::shared_ptr<Workspace> Open(std::vector<std::string> roots = {}, std::string cwd = "") {
    WorkspaceOptions o;
    o.roots = roots.empty() ? std::vector<std::string>{root_} : std::move(roots);
    o.cwd = std::move(cwd);
    o.home = tmp_ / "home";
    o.talaria_home = tmp_ / "thome";
    auto ws = Workspace::Open(o);
    EXPECT_TRUE(ws) << ws.error().ToString();
    return ws ? *ws : nullptr;
  }

  // Asserts `s` failed with `code` and that the message does not reveal the root.
  void ExpectRefused(const Status& s, StatusCode code, const std::string& what) {
    EXPECT_EQ(s.code(), code) << what << ": " << s.ToString();
    EXPECT_EQ(s.message().find(root_), std::string::npos) << what << ": " << s.message();
    EXPECT_EQ(s.message().find(tmp_.path()), std::string::npos) << what << ": " << s.message();
  }
  template <typename T>
  void ExpectRefused(const Result<T>& r, StatusCode code, const std::string& what) {
    ASSERT_FALSE(r) << what << " unexpectedly succeeded";
    ExpectRefused(r.error(), code, what);
  }

  TempDir tmp_;
  std::string root_;
};

TEST_F(WorkspaceTest, ResolvesRelativeAgainstCwd) {
  auto ws = Open({}, "sub");
  ASSERT_TRUE(ws);
  EXPECT_EQ(ws->cwd(), root_ + "/sub");
  auto r = ws->Resolve("inner.txt");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->relative, "sub/inner.txt");
  EXPECT_EQ(r->display, root_ + "/sub/inner.txt");
  auto up = ws->Resolve("../README.md");  // ".." that stays inside is fine
  ASSERT_TRUE(up);
  EXPECT_EQ(up->relative, "README.md");
  auto root = ws->Resolve("..");
  ASSERT_TRUE(root);
  EXPECT_EQ(root->relative, "");
  EXPECT_EQ(*ws->ReadAll("inner.txt", 100), "inner\n");
  ASSERT_TRUE(ws->SetCwd("..").ok());
  EXPECT_EQ(ws->cwd(), root_);
  EXPECT_EQ(ws->SetCwd("README.md").code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ws->SetCwd("nope").code(), StatusCode::kNotFound);
}

TEST_F(WorkspaceTest, ExpandsTilde) {
  WriteFile(tmp_ / "home/notes.txt", "n");
  auto ws = Open({tmp_ / "home"});
  ASSERT_TRUE(ws);
  EXPECT_EQ(*ws->ReadAll("~/notes.txt", 10), "n");
  auto r = ws->Resolve("~");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->relative, "");
  // "~user" is an ordinary name.
  auto named = ws->Resolve("~bob/x");
  ASSERT_TRUE(named);
  EXPECT_EQ(named->relative, "~bob/x");
}

TEST_F(WorkspaceTest, DotDotChainsRefused) {
  auto ws = Open({}, "sub");
  for (std::string p : {"../../outside/secret", "../../../../../../../../etc/passwd",
                        "../../ws_evil/secret", "sub/../../../outside/secret", "../.."}) {
    ExpectRefused(ws->OpenRead(p), StatusCode::kPermissionDenied, p);
    ExpectRefused(ws->WriteAtomic(p + "/new", "x"), StatusCode::kPermissionDenied, p);
    auto r = ws->OpenRead(p);
    ASSERT_FALSE(r);
    EXPECT_NE(r.error().message().find("outside the workspace"), std::string::npos);
  }
  EXPECT_FALSE(Exists(tmp_ / "new"));
  EXPECT_EQ(ReadFile(tmp_ / "outside/secret"), "outside secret\n");
}

TEST_F(WorkspaceTest, AbsolutePathOutsideRefused) {
  auto ws = Open();
  const std::string p = tmp_ / "outside/secret";
  auto r = ws->OpenRead(p);
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied);
  // The message names the caller's path and nothing else.
  EXPECT_EQ(r.error().message(), "Access denied: '" + p + "' is outside the workspace");
  EXPECT_FALSE(ws->WriteAtomic(tmp_ / "outside/new", "x"));
  EXPECT_FALSE(Exists(tmp_ / "outside/new"));
  EXPECT_FALSE(ws->Stat("/etc/hostname"));
  // Inside, absolute: fine.
  EXPECT_EQ(*ws->ReadAll(root_ + "/README.md", 100), "hello\n");
}

TEST_F(WorkspaceTest, SiblingWithLongerNameRefused) {
  auto ws = Open();
  for (const std::string& p : {tmp_ / "ws_evil/secret", root_ + "_evil/secret",
                               std::string("../ws_evil/secret"), root_ + "/../ws_evil/secret"}) {
    auto r = ws->OpenRead(p);
    ASSERT_FALSE(r) << p;
    EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied) << p;
    EXPECT_FALSE(ws->WriteAtomic(p + "2", "x")) << p;
  }
  EXPECT_FALSE(Exists(tmp_ / "ws_evil/secret2"));
}

TEST_F(WorkspaceTest, SymlinkedFileOutsideRefused) {
  ASSERT_EQ(::symlink((tmp_ / "outside/secret").c_str(), (root_ + "/abs_link").c_str()), 0);
  ASSERT_EQ(::symlink("../outside/secret", (root_ + "/rel_link").c_str()), 0);
  auto ws = Open();
  for (std::string p : {"abs_link", "rel_link"}) {
    ExpectRefused(ws->OpenRead(p), StatusCode::kPermissionDenied, p);
    ExpectRefused(ws->ReadAll(p, 1000), StatusCode::kPermissionDenied, p);
    ExpectRefused(ws->Stat(p), StatusCode::kPermissionDenied, p);
    // Writing: the leaf is a symlink, never followed.
    ExpectRefused(ws->WriteAtomic(p, "pwned"), StatusCode::kPermissionDenied, p);
  }
  EXPECT_EQ(ReadFile(tmp_ / "outside/secret"), "outside secret\n");
}

TEST_F(WorkspaceTest, SymlinkedDirectoryOutsideRefused) {
  ASSERT_EQ(::symlink((tmp_ / "outside").c_str(), (root_ + "/abs_dir").c_str()), 0);
  ASSERT_EQ(::symlink("../outside", (root_ + "/rel_dir").c_str()), 0);
  auto ws = Open();
  for (std::string d : {"abs_dir", "rel_dir"}) {
    ExpectRefused(ws->OpenRead(d + "/secret"), StatusCode::kPermissionDenied, d);
    ExpectRefused(ws->OpenDir(d), StatusCode::kPermissionDenied, d);
    ExpectRefused(ws->WriteAtomic(d + "/new.txt", "pwned"), StatusCode::kPermissionDenied, d);
    ExpectRefused(ws->WriteAtomic(d + "/newdir/x.txt", "pwned"), StatusCode::kPermissionDenied, d);
    ExpectRefused(ws->WriteAtomic(d + "/secret", "pwned"), StatusCode::kPermissionDenied, d);
    ExpectRefused(ws->Remove(d + "/secret"), StatusCode::kPermissionDenied, d);
    ExpectRefused(ws->Rename("README.md", d + "/moved"), StatusCode::kPermissionDenied, d);
    EXPECT_FALSE(ws->SetCwd(d).ok());
  }
  EXPECT_EQ(testing::ListDir(tmp_ / "outside"), std::vector<std::string>{"secret"});
  EXPECT_EQ(ReadFile(tmp_ / "outside/secret"), "outside secret\n");
}

TEST_F(WorkspaceTest, SymlinkInsideRootIsFollowedForReads) {
  ASSERT_EQ(::symlink("sub/inner.txt", (root_ + "/inner_link").c_str()), 0);
  ASSERT_EQ(::symlink("sub", (root_ + "/sub_link").c_str()), 0);
  auto ws = Open();
  EXPECT_EQ(*ws->ReadAll("inner_link", 100), "inner\n");
  EXPECT_EQ(*ws->ReadAll("sub_link/inner.txt", 100), "inner\n");
  // Writing through a symlinked directory inside the root lands inside the root.
  ASSERT_TRUE(ws->WriteAtomic("sub_link/new.txt", "n"));
  EXPECT_EQ(ReadFile(root_ + "/sub/new.txt"), "n");
}

TEST_F(WorkspaceTest, DanglingSymlinkOutsideNeverCreatesTarget) {
  ASSERT_EQ(::symlink((tmp_ / "outside/created_by_attack").c_str(), (root_ + "/dangle").c_str()),
            0);
  ASSERT_EQ(::symlink("../outside/newdir", (root_ + "/dangle_dir").c_str()), 0);
  auto ws = Open();
  ExpectRefused(ws->WriteAtomic("dangle", "pwned"), StatusCode::kPermissionDenied, "dangle");
  ExpectRefused(ws->OpenRead("dangle"), StatusCode::kPermissionDenied, "dangle read");
  ExpectRefused(ws->WriteAtomic("dangle_dir/file", "pwned"), StatusCode::kPermissionDenied,
                "dangle_dir");
  ExpectRefused(ws->WriteAtomic("dangle_dir/a/b/file", "pwned"), StatusCode::kPermissionDenied,
                "dangle_dir deep");
  EXPECT_FALSE(Exists(tmp_ / "outside/created_by_attack"));
  EXPECT_FALSE(Exists(tmp_ / "outside/newdir"));
  EXPECT_EQ(testing::ListDir(tmp_ / "outside"), std::vector<std::string>{"secret"});
}

TEST_F(WorkspaceTest, LeafSymlinkWriteRefusedWithClearMessage) {
  ASSERT_EQ(::symlink("README.md", (root_ + "/readme_link").c_str()), 0);
  auto ws = Open();
  auto r = ws->WriteAtomic("readme_link", "replaced");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(r.error().message().find("symbolic link"), std::string::npos);
  EXPECT_EQ(ReadFile(root_ + "/README.md"), "hello\n");
  struct stat st {};
  ASSERT_EQ(::lstat((root_ + "/readme_link").c_str(), &st), 0);
  EXPECT_TRUE(S_ISLNK(st.st_mode));
  EXPECT_EQ(ws->CheckWritable("readme_link").code(), StatusCode::kPermissionDenied);
}

TEST_F(WorkspaceTest, NulBytesAndOverlongPathsRefused) {
  auto ws = Open();
  const std::string nul("README.md\0/../../outside/secret", 31);
  ExpectRefused(ws->OpenRead(nul), StatusCode::kInvalidArgument, "nul");
  ExpectRefused(ws->WriteAtomic(std::string("a\0b", 3), "x"), StatusCode::kInvalidArgument,
                "nul write");
  std::string longp;
  while (longp.size() < 5000) longp += "abcdefgh/";
  ExpectRefused(ws->OpenRead(longp), StatusCode::kInvalidArgument, "long");
  ExpectRefused(ws->WriteAtomic(longp + "x", "x"), StatusCode::kInvalidArgument, "long write");
  ExpectRefused(ws->WriteAtomic(std::string(300, 'n'), "x"), StatusCode::kInvalidArgument,
                "long component");
  ExpectRefused(ws->OpenRead(""), StatusCode::kInvalidArgument, "empty");
  EXPECT_EQ(testing::ListDir(root_), (std::vector<std::string>{"README.md", "sub"}));
}

TEST_F(WorkspaceTest, FifoRefusedWithoutBlocking) {
  ASSERT_EQ(::mkfifo((root_ + "/fifo").c_str(), 0600), 0);
  auto ws = Open();
  // Opening the fifo (it has no writer) would block here for good.
  ExpectRefused(ws->OpenRead("fifo"), StatusCode::kPermissionDenied, "fifo");
  ExpectRefused(ws->ReadAll("fifo", 100), StatusCode::kPermissionDenied, "fifo");
  ExpectRefused(ws->WriteAtomic("fifo", "x"), StatusCode::kPermissionDenied, "fifo write");
  auto dir = ws->OpenDir(".");
  ASSERT_TRUE(dir);
  ExpectRefused(ws->OpenReadAt(dir->get(), "fifo"), StatusCode::kPermissionDenied, "fifo at");
  auto st = ws->Stat("fifo");  // metadata is fine
  ASSERT_TRUE(st);
  EXPECT_TRUE(S_ISFIFO(st->mode));
}

TEST_F(WorkspaceTest, DevicesRefusedInUnconfinedWorkspace) {
  auto ws = Open({"/"}, root_);
  ASSERT_TRUE(ws->unconfined());
  for (std::string p :
       {"/dev/zero", "/dev/urandom", "/dev/null", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0"}) {
    auto r = ws->OpenRead(p);
    ASSERT_FALSE(r) << p;
    EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied) << p << ": " << r.error().ToString();
  }
  // A symlink inside the tree that points at a device (or a magic link) is no way around it.
  ASSERT_EQ(::symlink("/dev/stdin", (root_ + "/stdin_link").c_str()), 0);
  ASSERT_EQ(::symlink("/dev/zero", (root_ + "/zero_link").c_str()), 0);
  EXPECT_EQ(ws->OpenRead("stdin_link").error().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ws->OpenRead("zero_link").error().code(), StatusCode::kPermissionDenied);
  // Never written either (checked without creating anything).
  EXPECT_EQ(ws->CheckWritable("/dev/null").code(), StatusCode::kPermissionDenied);
}

TEST_F(WorkspaceTest, DeviceNodeInsideRootRefusedForReadAndWrite) {
  // A character device (/dev/null's numbers) inside the root, when we may create one.
  if (::mknod((root_ + "/null_dev").c_str(), S_IFCHR | 0666, makedev(1, 3)) != 0) {
    GTEST_SKIP() << "mknod not permitted here";
  }
  auto ws = Open();
  ExpectRefused(ws->OpenRead("null_dev"), StatusCode::kPermissionDenied, "dev read");
  ExpectRefused(ws->WriteAtomic("null_dev", "x"), StatusCode::kPermissionDenied, "dev write");
  struct stat st {};
  ASSERT_EQ(::lstat((root_ + "/null_dev").c_str(), &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
}

TEST_F(WorkspaceTest, SymlinkToDeviceInConfinedRootRefused) {
  ASSERT_EQ(::symlink("/dev/zero", (root_ + "/zero").c_str()), 0);
  ASSERT_EQ(::symlink("/proc/self/environ", (root_ + "/env").c_str()), 0);
  auto ws = Open();
  ExpectRefused(ws->OpenRead("zero"), StatusCode::kPermissionDenied, "zero");
  ExpectRefused(ws->OpenRead("env"), StatusCode::kPermissionDenied, "environ");
}

TEST_F(WorkspaceTest, ProcAndSysRefused) {
  auto ws = Open({"/"}, root_);
  for (std::string p : {"/proc/self/environ", "/proc/self/mem", "/proc/self/maps",
                        "/proc/self/cmdline", "/proc/1/environ", "/proc/self/cwd/README.md",
                        "/proc/self/root/etc/hostname", "/proc/version"}) {
    auto r = ws->OpenRead(p);
    ASSERT_FALSE(r) << p;
    EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied) << p << ": " << r.error().ToString();
  }
  if (Exists("/sys/kernel/mm/transparent_hugepage/enabled")) {
    EXPECT_EQ(ws->OpenRead("/sys/kernel/mm/transparent_hugepage/enabled").error().code(),
              StatusCode::kPermissionDenied);
  }
  EXPECT_EQ(ws->OpenDir("/proc/self").error().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ws->CheckWritable("/proc/self/comm").code(), StatusCode::kPermissionDenied);
  // Ordinary files in the unconfined workspace are fine, absolute symlinks included.
  EXPECT_TRUE(ws->OpenRead(root_ + "/README.md"));
}

// Files on a root's own device skip the pseudo-file-system probe; a root that is itself on
// procfs must not make its files look ordinary.
TEST_F(WorkspaceTest, RootOnProcfsStillRefusesItsFiles) {
  auto ws = Open({"/proc"}, "/proc");
  ASSERT_NE(ws, nullptr);
  for (std::string p : {"/proc/version", "/proc/self/status", "version"}) {
    auto r = ws->OpenRead(p);
    ASSERT_FALSE(r) << p;
    EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied) << p << ": " << r.error().ToString();
  }
  EXPECT_EQ(ws->OpenDir("/proc/self").error().code(), StatusCode::kPermissionDenied);
}

TEST_F(WorkspaceTest, SensitiveWritesDeniedEvenUnconfined) {
  const std::string home = tmp_ / "home";
  std::filesystem::create_directories(home + "/.ssh");
  WriteFile(home + "/.bashrc", "# rc\n");
  auto ws = Open({"/"}, root_);
  const std::vector<std::string> denied = {"~/.ssh/authorized_keys",
                                           home + "/.ssh/authorized_keys",
                                           "~/.ssh/config",
                                           "~/.aws/credentials",
                                           "~/.gnupg/gpg.conf",
                                           "~/.kube/config",
                                           "~/.docker/config.json",
                                           "~/.azure/x",
                                           "~/.config/gh/hosts.yml",
                                           "~/.config/gcloud/c.json",
                                           "~/.netrc",
                                           "~/.pgpass",
                                           "~/.npmrc",
                                           "~/.pypirc",
                                           "~/.git-credentials",
                                           "~/.bashrc",
                                           "~/.bash_profile",
                                           "~/.profile",
                                           "~/.zshrc",
                                           "~/.zprofile",
                                           "~/.config/fish/config.fish",
                                           tmp_ / "thome/config.yaml",
                                           tmp_ / "thome/audit.jsonl",
                                           tmp_ / "thome/sessions.db",
                                           tmp_ / "thome/spill/x.txt",
                                           tmp_ / "thome/plugins/p.so",
                                           tmp_ / "thome/auth.json"};
  for (const std::string& p : denied) {
    auto r = ws->WriteAtomic(p, "pwned");
    ASSERT_FALSE(r) << p;
    EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied) << p;
    EXPECT_NE(r.error().message().find("denied"), std::string::npos) << r.error().message();
  }
  // Nothing was created: not even the missing parent directories.
  EXPECT_EQ(testing::ListDir(home), (std::vector<std::string>{".bashrc", ".ssh"}));
  EXPECT_TRUE(testing::ListDir(home + "/.ssh").empty());
  EXPECT_EQ(ReadFile(home + "/.bashrc"), "# rc\n");
  EXPECT_TRUE(testing::ListDir(tmp_ / "thome").empty());
  // System files: checked with CheckWritable (never risk touching them in a test).
  for (std::string p : {"/etc/passwd", "/etc/shadow", "/etc/sudoers", "/etc/sudoers.d/x",
                        "/etc/systemd/system/evil.service", "/etc/../etc/passwd"}) {
    EXPECT_EQ(ws->CheckWritable(p).code(), StatusCode::kPermissionDenied) << p;
  }
  EXPECT_EQ(ws->Remove(home + "/.bashrc").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ws->Rename(home + "/.bashrc", root_ + "/rc").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ws->Rename(root_ + "/README.md", "~/.ssh/authorized_keys").code(),
            StatusCode::kPermissionDenied);
  EXPECT_TRUE(Exists(root_ + "/README.md"));
  // Ordinary files in home are writable.
  EXPECT_TRUE(ws->WriteAtomic("~/notes/todo.txt", "ok"));
}

TEST_F(WorkspaceTest, SensitiveRulesFollowTheRealPath) {
  const std::string home = tmp_ / "home";
  std::filesystem::create_directories(home + "/.ssh");
  // Innocent names that lead into protected places.
  ASSERT_EQ(::symlink((home + "/.ssh").c_str(), (root_ + "/keys").c_str()), 0);
  ASSERT_EQ(::symlink(home.c_str(), (root_ + "/h").c_str()), 0);
  auto ws = Open({"/"}, root_);
  EXPECT_EQ(ws->WriteAtomic("keys/authorized_keys", "pwned").error().code(),
            StatusCode::kPermissionDenied);
  // The parent .aws does not exist: refused before it is created.
  EXPECT_EQ(ws->WriteAtomic("h/.aws/credentials", "pwned").error().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(ws->WriteAtomic("h/.bashrc", "pwned").error().code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(testing::ListDir(home + "/.ssh").empty());
  EXPECT_EQ(testing::ListDir(home), std::vector<std::string>{".ssh"});
}

TEST_F(WorkspaceTest, GitHooksAndConfigDenied) {
  WriteFile(root_ + "/.git/HEAD", "ref: refs/heads/main\n");
  WriteFile(root_ + "/.git/config", "[core]\n");
  std::filesystem::create_directories(root_ + "/.git/hooks");
  ASSERT_EQ(::symlink(".git/hooks", (root_ + "/hooks_link").c_str()), 0);
  auto ws = Open();
  ExpectRefused(ws->WriteAtomic(".git/hooks/pre-commit", "#!/bin/sh\nevil\n"),
                StatusCode::kPermissionDenied, "hook");
  ExpectRefused(ws->WriteAtomic("sub/../.git/config", "[core]\nfsmonitor=evil\n"),
                StatusCode::kPermissionDenied, "config");
  ExpectRefused(ws->WriteAtomic("hooks_link/post-checkout", "evil"), StatusCode::kPermissionDenied,
                "hook via symlink");
  ExpectRefused(ws->WriteAtomic("vendor/lib/.git/hooks/pre-push", "evil"),
                StatusCode::kPermissionDenied, "nested repo");
  EXPECT_FALSE(Exists(root_ + "/vendor"));
  EXPECT_TRUE(testing::ListDir(root_ + "/.git/hooks").empty());
  EXPECT_EQ(ReadFile(root_ + "/.git/config"), "[core]\n");
  EXPECT_EQ(*ws->ReadAll(".git/config", 100), "[core]\n");  // reading is fine
}

// Each of these made the user's next `git status` run a command when write_file could write
// it: commondir and gitdir point git at a directory with a hostile config, submodules and
// worktrees carry configs and hooks of their own, and a `.git` file redirects the repository.
TEST_F(WorkspaceTest, EveryGitInternalIsDeniedAtAnyDepth) {
  WriteFile(root_ + "/.git/HEAD", "ref: refs/heads/main\n");
  WriteFile(root_ + "/sub/mod/.git", "gitdir: ../../.git/modules/mod\n");
  auto ws = Open();
  for (std::string p :
       {".git/commondir", ".git/config.worktree", ".git/HEAD", ".git/modules/mod/config",
        ".git/modules/mod/hooks/post-checkout", ".git/worktrees/w/commondir",
        ".git/worktrees/w/config.worktree", ".git/info/attributes", "sub/mod/.git",
        "deep/a/b/.git/config", "sub/../.git/./modules/x/config"}) {
    ExpectRefused(ws->WriteAtomic(p, "[core]\n\tfsmonitor = touch /tmp/pwned\n"),
                  StatusCode::kPermissionDenied, p);
  }
  EXPECT_EQ(ReadFile(root_ + "/sub/mod/.git"), "gitdir: ../../.git/modules/mod\n");
  EXPECT_EQ(testing::ListDir(root_ + "/.git"), std::vector<std::string>{"HEAD"});
  EXPECT_FALSE(Exists(root_ + "/deep"));
  EXPECT_EQ(ws->Remove("sub/mod/.git").code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ws->Rename("README.md", ".git/commondir").code(), StatusCode::kPermissionDenied);
  // Names that merely contain ".git" are ordinary files.
  EXPECT_TRUE(ws->WriteAtomic(".gitignore", "build/\n"));
  EXPECT_TRUE(ws->WriteAtomic("docs/.github/x.yml", "on: push\n"));
  EXPECT_TRUE(ws->WriteAtomic("repo.git.txt", "x"));
}

// `ln /etc/shadow ./shadow` (or a key in ~/.ssh) puts an outside file's content under a name
// inside the root; nothing in the inode says where its other names are.
TEST_F(WorkspaceTest, HardLinkedFilesAreNotRead) {
  ASSERT_EQ(::link((tmp_ / "outside/secret").c_str(), (root_ + "/innocent.txt").c_str()), 0);
  auto ws = Open();
  ExpectRefused(ws->OpenRead("innocent.txt"), StatusCode::kPermissionDenied, "hard link");
  ExpectRefused(ws->ReadAll("innocent.txt", 100), StatusCode::kPermissionDenied, "hard link");
  auto dir = ws->OpenDir(".");
  ASSERT_TRUE(dir);
  auto at = ws->OpenReadAt(dir->get(), "innocent.txt");
  ASSERT_FALSE(at);
  EXPECT_EQ(at.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(at.error().message().find("hard links"), std::string::npos) << at.error().message();
  // A file with a single name reads as before; so do hard links when the user allows them.
  EXPECT_EQ(*ws->ReadAll("README.md", 100), ReadFile(root_ + "/README.md"));
  WorkspaceOptions o;
  o.roots = {root_};
  o.home = tmp_ / "home";
  o.talaria_home = tmp_ / "thome";
  o.hard_link_reads = HardLinkReads::kAllow;
  auto allowing = Workspace::Open(o);
  ASSERT_TRUE(allowing);
  EXPECT_EQ(*(*allowing)->ReadAll("innocent.txt", 100), "outside secret\n");
}

// A path with no symlink beneath its root is judged on the root's real path plus the rest
// (no /proc lookup): a root given through a symlink still finds talaria's credentials, and a
// symlink or a symlinked directory beneath the root still goes through the real path.
TEST_F(WorkspaceTest, CredentialsAreFoundThroughASymlinkedRootAndSymlinksBeneathIt) {
  WriteFile(tmp_ / "thome/auth.json", "{}");
  ASSERT_EQ(::symlink(tmp_.path().c_str(), (tmp_ / "alias").c_str()), 0);
  auto ws = Open({tmp_ / "alias"}, tmp_ / "alias");
  ASSERT_NE(ws, nullptr);
  auto absolute = ws->OpenRead(tmp_ / "alias/thome/auth.json");
  ASSERT_FALSE(absolute);
  EXPECT_EQ(absolute.error().code(), StatusCode::kPermissionDenied) << absolute.error().ToString();
  ExpectRefused(ws->OpenRead("thome/auth.json"), StatusCode::kPermissionDenied, "relative");
  ASSERT_EQ(::symlink("thome", (tmp_ / "th").c_str()), 0);
  ExpectRefused(ws->OpenRead("th/auth.json"), StatusCode::kPermissionDenied, "symlinked dir");
  ASSERT_EQ(::symlink("thome/auth.json", (tmp_ / "a.json").c_str()), 0);
  ExpectRefused(ws->OpenRead("a.json"), StatusCode::kPermissionDenied, "symlinked file");
  WriteFile(tmp_ / "notes.txt", "fine");
  EXPECT_EQ(*ws->ReadAll("notes.txt", 10), "fine");
}

TEST_F(WorkspaceTest, EnvFilesNeverRead) {
  WriteFile(root_ + "/.env", "API_KEY=secret\n");
  WriteFile(root_ + "/sub/.env.local", "X=1\n");
  WriteFile(root_ + "/.envrc", "export X=1\n");
  WriteFile(root_ + "/.env.example", "API_KEY=\n");
  ASSERT_EQ(::symlink(".env", (root_ + "/innocent.txt").c_str()), 0);
  auto ws = Open();
  for (std::string p : {".env", "sub/.env.local", ".envrc", "innocent.txt"}) {
    ExpectRefused(ws->OpenRead(p), StatusCode::kPermissionDenied, p);
    ExpectRefused(ws->ReadAll(p, 1000), StatusCode::kPermissionDenied, p);
  }
  auto dir = ws->OpenDir(".");
  ASSERT_TRUE(dir);
  EXPECT_TRUE(ws->IsSensitiveForRead(root_ + "/.env"));
  EXPECT_TRUE(ws->IsSensitiveForRead(root_ + "/sub/.env.production"));
  EXPECT_FALSE(ws->IsSensitiveForRead(root_ + "/.env.example"));
  EXPECT_TRUE(ws->IsSensitiveForRead("sub/.envrc"));
  EXPECT_FALSE(ws->IsSensitiveForRead("sub/inner.txt"));
  EXPECT_EQ(*ws->ReadAll(".env.example", 100), "API_KEY=\n");
  // Laundering through a rename is refused too.
  EXPECT_EQ(ws->Rename(".env", "plain.txt").code(), StatusCode::kPermissionDenied);
  EXPECT_TRUE(Exists(root_ + "/.env"));
  // Writing a .env is allowed (it leaks nothing).
  EXPECT_TRUE(ws->WriteAtomic(".env", "API_KEY=new\n"));
}

// $TALARIA_HOME is talaria's, whatever the roots: a tool that could write approvals.json or
// trusted.json could approve or trust itself, and reading it leaks credentials, other
// sessions and the audit trail. Only the spill files talaria points the model to are readable.
TEST_F(WorkspaceTest, TalariaHomeIsOffLimitsWhateverTheRoots) {
  for (std::string f : {"auth.json", "mcp-tokens/srv.json", "memories/MEMORY.md", "approvals.json",
                        "trusted.json", "audit.jsonl", "notes.txt"}) {
    WriteFile(tmp_ / ("thome/" + f), "{}");
  }
  WriteFile(tmp_ / "thome/spill/call_1-ab.txt", "spilled");
  for (auto roots : {std::vector<std::string>{"/"}, std::vector<std::string>{tmp_.path()},
                     std::vector<std::string>{tmp_ / "thome"}}) {
    auto ws = Open(roots, roots[0]);
    ASSERT_NE(ws, nullptr);
    for (std::string f : {"approvals.json", "trusted.json", "audit.jsonl", "config.yaml",
                          "memories/MEMORY.md", "sessions/s.jsonl", "new/dir/x", "notes.txt"}) {
      auto w = ws->WriteAtomic(tmp_ / ("thome/" + f), R"(["recursive_delete"])");
      ASSERT_FALSE(w) << f;
      EXPECT_EQ(w.error().code(), StatusCode::kPermissionDenied) << f;
    }
    for (std::string f : {"auth.json", "mcp-tokens/srv.json", "memories/MEMORY.md",
                          "approvals.json", "trusted.json", "audit.jsonl", "notes.txt"}) {
      EXPECT_EQ(ws->OpenRead(tmp_ / ("thome/" + f)).error().code(), StatusCode::kPermissionDenied)
          << f;
    }
    EXPECT_EQ(ws->Remove(tmp_ / "thome/audit.jsonl").code(), StatusCode::kPermissionDenied);
    EXPECT_EQ(*ws->ReadAll(tmp_ / "thome/spill/call_1-ab.txt", 100), "spilled");
  }
  EXPECT_EQ(ReadFile(tmp_ / "thome/approvals.json"), "{}");
  EXPECT_FALSE(Exists(tmp_ / "thome/new"));
}

// With the home as a root (`--root ~`), the credential stores the sandbox hides from commands
// are not readable through the file tools either.
TEST_F(WorkspaceTest, CredentialStoresInTheHomeAreNotRead) {
  const std::string home = tmp_ / "home";
  WriteFile(home + "/.ssh/id_ed25519", "PRIVATE KEY");
  WriteFile(home + "/.aws/credentials", "secret");
  WriteFile(home + "/.netrc", "password");
  WriteFile(home + "/notes.txt", "fine");
  auto ws = Open({home}, home);
  for (std::string p : {"~/.ssh/id_ed25519", ".aws/credentials", ".netrc"}) {
    auto r = ws->ReadAll(p, 100);
    ASSERT_FALSE(r) << p;
    EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied) << p;
  }
  EXPECT_EQ(*ws->ReadAll("notes.txt", 100), "fine");
}

TEST_F(WorkspaceTest, NotFoundAndDirectories) {
  auto ws = Open();
  EXPECT_EQ(ws->OpenRead("missing.txt").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(ws->OpenRead("missing/dir/x").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(ws->OpenRead("README.md/x").error().code(), StatusCode::kNotFound);
  EXPECT_EQ(ws->OpenRead("sub").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ws->OpenDir("README.md").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ws->WriteAtomic("sub", "x").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ws->WriteAtomic(".", "x").error().code(), StatusCode::kInvalidArgument);
  EXPECT_EQ(ws->WriteAtomic("README.md/x", "x").error().code(), StatusCode::kNotFound);
}

TEST_F(WorkspaceTest, ReadAllHonoursLimit) {
  WriteFile(root_ + "/big.txt", std::string(1000, 'x'));
  auto ws = Open();
  FileInfo info;
  auto all = ws->ReadAll("big.txt", 1000, &info);
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), 1000u);
  EXPECT_EQ(info.size, 1000u);
  EXPECT_EQ(ws->ReadAll("big.txt", 999).error().code(), StatusCode::kResourceExhausted);
  EXPECT_EQ(*ws->ReadAll("sub/inner.txt", 6), "inner\n");
}

TEST_F(WorkspaceTest, DirectoryWalkHelpers) {
  ASSERT_EQ(::symlink("../outside", (root_ + "/out_link").c_str()), 0);
  ASSERT_EQ(::symlink("README.md", (root_ + "/readme_link").c_str()), 0);
  auto ws = Open();
  auto dir = ws->OpenDir("");
  ASSERT_FALSE(dir);  // empty path
  dir = ws->OpenDir(".");
  ASSERT_TRUE(dir);
  auto sub = ws->OpenDirAt(dir->get(), "sub");
  ASSERT_TRUE(sub);
  FileInfo info;
  auto f = ws->OpenReadAt(sub->get(), "inner.txt", &info);
  ASSERT_TRUE(f);
  EXPECT_EQ(info.size, 6u);
  EXPECT_EQ(ws->OpenDirAt(dir->get(), "out_link").error().code(), StatusCode::kPermissionDenied);
  EXPECT_EQ(ws->OpenReadAt(dir->get(), "readme_link").error().code(),
            StatusCode::kPermissionDenied);
  EXPECT_EQ(ws->OpenReadAt(dir->get(), "../outside/secret").error().code(),
            StatusCode::kInvalidArgument);
  EXPECT_EQ(ws->OpenReadAt(dir->get(), "..").error().code(), StatusCode::kInvalidArgument);
}

TEST_F(WorkspaceTest, SeveralRootsAndSymlinkedRoot) {
  WriteFile(tmp_ / "ws2/b.txt", "b");
  ASSERT_EQ(::symlink("ws", (tmp_ / "ws_alias").c_str()), 0);
  auto ws = Open({tmp_ / "ws_alias", tmp_ / "ws2"});
  ASSERT_TRUE(ws);
  EXPECT_EQ(ws->cwd(), tmp_ / "ws_alias");
  EXPECT_EQ(*ws->ReadAll(tmp_ / "ws2/b.txt", 10), "b");
  // The root's real path is accepted too, and displayed as configured.
  auto r = ws->Resolve(root_ + "/README.md");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->root_index, 0u);
  EXPECT_EQ(r->display, tmp_ / "ws_alias/README.md");
  EXPECT_EQ(*ws->ReadAll(root_ + "/README.md", 10), "hello\n");
  EXPECT_FALSE(ws->OpenRead(tmp_ / "ws_evil/secret"));
  EXPECT_FALSE(ws->OpenRead(tmp_ / "ws22/x"));
}

TEST_F(WorkspaceTest, OpenValidatesOptions) {
  EXPECT_EQ(Workspace::Open({}).error().code(), StatusCode::kInvalidArgument);
  WorkspaceOptions o;
  o.roots = {"relative/root"};
  EXPECT_EQ(Workspace::Open(o).error().code(), StatusCode::kInvalidArgument);
  o.roots = {tmp_ / "nope"};
  EXPECT_EQ(Workspace::Open(o).error().code(), StatusCode::kNotFound);
  o.roots = {root_};
  o.cwd = tmp_ / "outside";
  EXPECT_EQ(Workspace::Open(o).error().code(), StatusCode::kPermissionDenied);
  o.cwd = "README.md";
  EXPECT_EQ(Workspace::Open(o).error().code(), StatusCode::kInvalidArgument);
}

}  // namespace
}  // namespace talaria::safety
