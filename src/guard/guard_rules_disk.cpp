// Disks: mkfs and friends, wipefs/sgdisk/blkdiscard, partition editors, dd (of= a device is
// hardline; any dd if= needs approval).
#include "guard/guard_internal.h"

namespace talaria::safety::guard {
namespace {

bool AnyOperandIsDevice(Judge& judge, const CommandView& v) {
  for (const ShellWord* w : v.args) {
    if (!IsOption(w->text) && IsBlockDevice(judge.Resolve(*w))) return true;
  }
  return false;
}

bool HasArg(const CommandView& v, std::string_view a) {
  for (const ShellWord* w : v.args) {
    if (w->text == a) return true;
  }
  return false;
}

void Wipe(Judge& judge) {
  judge.Add("wipe_block_device", "wipe a block device", GuardTier::kHardline);
}

void Format(Judge& judge) {
  judge.Add("format_filesystem", "format a filesystem (mkfs)", GuardTier::kHardline);
}

void PartitionTable(Judge& judge) {
  judge.Add("partition_table", "modify a partition table", GuardTier::kDangerous);
}

}  // namespace

void JudgeDiskRules(Judge& judge, const CommandView& v) {
  const std::string_view n = v.name;
  if (n == "mkfs" || n.starts_with("mkfs.") || n == "mke2fs" || n == "mkntfs" || n == "mkdosfs" ||
      n == "mkexfatfs" || n == "mkfs_msdos" || n.starts_with("newfs")) {
    if (HasArg(v, "--help") || HasArg(v, "-V") || HasArg(v, "--version")) return;
    Format(judge);
  } else if (n == "mkswap") {
    if (AnyOperandIsDevice(judge, v)) Wipe(judge);
  } else if (n == "wipefs") {
    bool all = false;
    bool no_act = false;
    bool offset = false;
    for (const ShellWord* w : v.args) {
      const std::string_view t = w->text;
      if (t == "--all" || ShortFlagsContain(t, 'a')) all = true;
      if (t == "--no-act" || ShortFlagsContain(t, 'n')) no_act = true;
      if (t == "--offset" || t.starts_with("--offset=") || ShortFlagsContain(t, 'o')) offset = true;
    }
    if ((all || offset) && !no_act) Wipe(judge);
  } else if (n == "sgdisk" || n == "gdisk" || n == "sfdisk" || n == "fdisk" || n == "cfdisk" ||
             n == "parted" || n == "partx" || n == "growpart") {
    bool zap = false;
    bool query = false;
    for (const ShellWord* w : v.args) {
      const std::string_view t = w->text;
      if (n == "sgdisk" && (t == "--zap-all" || t == "--zap" || t == "--clear" ||
                            (IsOption(t) && !t.starts_with("--") &&
                             t.find_first_of("Zzo") != std::string_view::npos))) {
        zap = true;
      }
      if (t == "-l" || t == "--list" || t == "-p" || t == "--print" || t == "print" || t == "-i" ||
          t == "--info" || t == "-v" || t == "--verify" || t == "--show") {
        query = true;
      }
    }
    if (zap) {
      Wipe(judge);
    } else if (!query) {
      PartitionTable(judge);
    }
  } else if (n == "blkdiscard") {
    Wipe(judge);
  } else if (n == "nvme") {
    if (!v.args.empty() && (v.args[0]->text == "format" || v.args[0]->text == "sanitize")) {
      Wipe(judge);
    }
  } else if (n == "cryptsetup") {
    for (const ShellWord* w : v.args) {
      if (w->text == "luksFormat" || w->text == "erase" || w->text == "luksErase") Format(judge);
    }
  } else if (n == "dd") {
    for (const ShellWord* w : v.args) {
      const std::string_view t = w->text;
      if (t.starts_with("of=")) {
        const ResolvedPath p = judge.ResolveText(t.substr(3), w->flags | kWordTilde);
        if (IsBlockDevice(p)) {
          judge.Add("write_block_device", "write to a raw block device", GuardTier::kHardline);
        } else if (auto f = ClassifyWrite(p)) {
          judge.Add(f->rule, f->description, f->tier);
        }
      } else if (t.starts_with("if=")) {
        judge.Add("disk_copy", "raw copy with dd (dd if=)", GuardTier::kDangerous);
      }
    }
  }
}

}  // namespace talaria::safety::guard
