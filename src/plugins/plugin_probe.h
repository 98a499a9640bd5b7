// The pre-scan of one plugin directory's candidates, spread over a few threads: names, disabled
// lists, cached verdicts and fresh ELF scans, each candidate's report built as far as the scan
// alone decides it.
// Thread-safety: ProbeAll runs probes concurrently, each touching only its own slot.
#pragma once

#include <sys/stat.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "plugins/verdict_cache.h"
#include "talaria/plugins/elf_scan.h"
#include "talaria/plugins/plugin_loader.h"

namespace talaria::plugins {

inline constexpr std::string_view kSuffix = ".so";

inline FileKey KeyOf(const struct stat& st) {
  return FileKey{static_cast<uint64_t>(st.st_size),
                 static_cast<int64_t>(st.st_mtim.tv_sec) * 1'000'000'000 + st.st_mtim.tv_nsec,
                 static_cast<uint64_t>(st.st_ino)};
}

// Whether `name` is on a config list (by name, or by file name with the .so suffix).
inline bool Listed(const std::vector<std::string>& list, std::string_view name) {
  return std::any_of(list.begin(), list.end(), [&](const std::string& item) {
    return item == name || (item.size() == name.size() + kSuffix.size() && item.starts_with(name) &&
                            item.ends_with(kSuffix));
  });
}

// One candidate's pre-scan, done before any decision about it: a cached verdict (one fstatat)
// or a fresh scan (openat + fstat + pread + close). Relative to the directory's descriptor, so
// no path is walked again per file. The probe also builds the candidate's report as far as the
// scan alone decides it (path, name, scan fields, reason): those strings are made in the probe
// threads, and the sequential decisions afterwards only override them.
struct Probe {
  const std::string* file = nullptr;  // the name inside the directory
  CandidateReport c;
  bool disabled = false;
  bool cached = false;
  struct stat st {};
  ScanVerdict verdict;
};

// What ProbeOne needs besides the probe: the same for every candidate of one directory.
struct ProbeContext {
  int dir_fd = -1;
  const std::string* prefix = nullptr;  // the directory with a trailing '/'
  const VerdictCache* cache = nullptr;
  const DiscoveryOptions* options = nullptr;
  // Whether to open with O_NOATIME: a pre-scan is not a use of the file, and on a file written
  // since it was last read (a fresh install, every update) the atime update costs an inode write
  // and a journal entry per file. Only the owner (or CAP_FOWNER) may ask for it; the first EPERM
  // turns it off for the rest of the directory, so files owned by others cost one extra open at
  // most once per directory and thread race.
  std::atomic<bool>* noatime = nullptr;
};

// Probes every candidate; a large directory is spread over a few threads (the work is system
// calls, and a pre-scan neither runs nor maps anything). Each probe touches only its own slot
// and reads the cache, which nobody writes meanwhile.
void ProbeAll(const ProbeContext& ctx, std::vector<Probe>& probes);

}  // namespace talaria::plugins
