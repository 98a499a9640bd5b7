// VerdictCache: the on-disk memory of pre-scan verdicts (and of passed trial loads,
// plugin_trial.h), so a restart with many candidates re-reads and re-tries only the files that
// changed.
//
// One small JSON file, one row per file (rows rather than an object keyed by path: parsing and
// writing stay linear in the number of files):
//   {"format": 3, "host": "<machine/pointer size/interface version>",
//    "entries": [["<absolute path>", size, mtime_ns, inode, "<outcome>", version, "<reason>",
//                 trial_passed], ...]}
// An entry counts only while the file's size, mtime (ns) and inode are unchanged. A file of
// another format or host (or one that does not parse: a torn write) is treated as empty.
// Saving writes a temp file in the same directory and renames it over the old one, so readers
// see the old or the new file, never half of one.
// Thread-safety: not thread-safe; caller synchronises.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

#include "talaria/base/status.h"
#include "talaria/plugins/elf_scan.h"

namespace talaria::plugins {

struct FileKey {
  uint64_t size = 0;
  int64_t mtime_ns = 0;
  uint64_t ino = 0;
  bool operator==(const FileKey&) const = default;
};

class VerdictCache {
 public:
  // Reads `path`; a missing or unusable file gives an empty cache (never an error).
  static VerdictCache Load(const std::string& path);

  // The cached verdict when the entry's key equals `key`.
  std::optional<ScanVerdict> Find(std::string_view file, const FileKey& key) const;
  bool Contains(std::string_view file) const { return entries_.find(file) != entries_.end(); }
  // Records a fresh pre-scan verdict (and forgets any passed trial: the file is new to it).
  void Put(const std::string& file, const FileKey& key, const ScanVerdict& verdict);
  // Whether the file, unchanged since, passed a trial load. A failed trial is never remembered:
  // what crashed it may lie outside the file (its environment), so it is tried again next time.
  bool TrialPassed(std::string_view file, const FileKey& key) const;
  // Remembers a passed trial for the entry of `file` when its key is `key` (else nothing).
  void MarkTrialPassed(std::string_view file, const FileKey& key);
  // Drops the entries of files directly inside `dir_prefix` (a directory path ending in '/')
  // that are not in `seen`: called after a directory scan so deleted files do not accumulate.
  void Retain(std::string_view dir_prefix, const std::set<std::string, std::less<>>& seen);

  bool dirty() const { return dirty_; }
  size_t size() const { return entries_.size(); }

  // Writes the cache atomically (temp + rename) when it changed; creates the parent directory.
  // Internal / PermissionDenied with the path on failure; the old file stays intact.
  Status Save() const;

 private:
  struct Entry {
    FileKey key;
    ScanVerdict verdict;
    bool trial_passed = false;
  };
  std::string path_;
  std::map<std::string, Entry, std::less<>> entries_;
  bool dirty_ = false;
};

}  // namespace talaria::plugins
