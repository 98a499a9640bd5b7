#include "plugins/verdict_cache.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "talaria/base/file_io.h"
#include "talaria/base/json.h"
#include "talaria/base/log.h"
#include "talaria/base/unique_fd.h"
#include "talaria/plugin.h"

namespace talaria::plugins {
namespace {

constexpr int kFormat = 3;
constexpr uint64_t kMaxCacheBytes = 64ull << 20;

// Verdicts depend on the host (class, machine) and the interface version it supports: a cache
// written by another build is not trusted.
#define TALARIA_CACHE_STR2(x) #x
#define TALARIA_CACHE_STR(x) TALARIA_CACHE_STR2(x)
#if defined(__x86_64__)
#define TALARIA_CACHE_MACHINE "x86_64"
#elif defined(__aarch64__)
#define TALARIA_CACHE_MACHINE "aarch64"
#else
#define TALARIA_CACHE_MACHINE "other"
#endif
std::string HostKey() {
  std::string key = TALARIA_CACHE_MACHINE "/" TALARIA_CACHE_STR(__SIZEOF_POINTER__) "/iface";
  key += std::to_string(TALARIA_PLUGIN_INTERFACE_VERSION);
  return key;
}

}  // namespace

VerdictCache VerdictCache::Load(const std::string& path) {
  VerdictCache cache;
  cache.path_ = path;
  UniqueFd fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK));
  if (!fd) return cache;
  struct stat st {};
  if (::fstat(fd.get(), &st) != 0 || !S_ISREG(st.st_mode) ||
      static_cast<uint64_t>(st.st_size) > kMaxCacheBytes) {
    return cache;
  }
  std::string text(static_cast<size_t>(st.st_size), '\0');
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::read(fd.get(), text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    done += static_cast<size_t>(n);
  }
  text.resize(done);
  auto root = ParseJson(text);
  if (!root || !root->is_object() || root->value("format", 0) != kFormat ||
      root->value("host", std::string()) != HostKey()) {
    if (!text.empty() && !root)
      LogWarn("plugin scan cache " + path + " is unreadable; rebuilding it");
    return cache;
  }
  auto entries = root->find("entries");
  if (entries == root->end() || !entries->is_array()) return cache;
  for (const Json& row : *entries) {
    // [path, size, mtime_ns, ino, outcome, version, reason, trial_passed]
    if (!row.is_array() || row.size() != 8 || !row[0].is_string() || !row[1].is_number_unsigned() ||
        !row[2].is_number_integer() || !row[3].is_number_unsigned() || !row[4].is_string() ||
        !row[5].is_number_unsigned() || !row[6].is_string() || !row[7].is_boolean()) {
      continue;
    }
    Entry entry;
    entry.key = FileKey{row[1].get<uint64_t>(), row[2].get<int64_t>(), row[3].get<uint64_t>()};
    if (!ParseScanOutcome(row[4].get_ref<const std::string&>(), entry.verdict.outcome)) continue;
    entry.verdict.interface_version = static_cast<uint32_t>(row[5].get<uint64_t>());
    entry.verdict.reason = row[6].get<std::string>();
    entry.trial_passed = row[7].get<bool>();
    cache.entries_.insert_or_assign(row[0].get<std::string>(), std::move(entry));
  }
  return cache;
}

std::optional<ScanVerdict> VerdictCache::Find(std::string_view file, const FileKey& key) const {
  auto it = entries_.find(file);
  if (it == entries_.end() || !(it->second.key == key)) return std::nullopt;
  return it->second.verdict;
}

void VerdictCache::Put(const std::string& file, const FileKey& key, const ScanVerdict& verdict) {
  auto& entry = entries_[file];
  entry.key = key;
  entry.verdict = verdict;
  entry.trial_passed = false;
  dirty_ = true;
}

bool VerdictCache::TrialPassed(std::string_view file, const FileKey& key) const {
  auto it = entries_.find(file);
  return it != entries_.end() && it->second.key == key && it->second.trial_passed;
}

void VerdictCache::MarkTrialPassed(std::string_view file, const FileKey& key) {
  auto it = entries_.find(file);
  if (it == entries_.end() || !(it->second.key == key) || it->second.trial_passed) return;
  it->second.trial_passed = true;
  dirty_ = true;
}

void VerdictCache::Retain(std::string_view dir_prefix,
                          const std::set<std::string, std::less<>>& seen) {
  for (auto it = entries_.lower_bound(dir_prefix);
       it != entries_.end() && it->first.compare(0, dir_prefix.size(), dir_prefix) == 0;) {
    const bool direct_child = it->first.find('/', dir_prefix.size()) == std::string::npos;
    if (direct_child && !seen.contains(it->first)) {
      it = entries_.erase(it);
      dirty_ = true;
    } else {
      ++it;
    }
  }
}

Status VerdictCache::Save() const {
  if (!dirty_ || path_.empty()) return Status::Ok();
  // Written straight out, not built as a Json document first: a cache of a thousand entries
  // would cost as many small arrays.
  std::string text = "{\"format\":" + std::to_string(kFormat) + ",\"host\":";
  AppendJsonQuoted(text, HostKey());
  text += ",\"entries\":[";
  text.reserve(text.size() + entries_.size() * 160);
  bool first = true;
  for (const auto& [file, e] : entries_) {
    text += first ? "[" : ",[";
    first = false;
    AppendJsonQuoted(text, file);
    text += ',';
    text += std::to_string(e.key.size);
    text += ',';
    text += std::to_string(e.key.mtime_ns);
    text += ',';
    text += std::to_string(e.key.ino);
    text += ',';
    AppendJsonQuoted(text, ScanOutcomeName(e.verdict.outcome));
    text += ',';
    text += std::to_string(e.verdict.interface_version);
    text += ',';
    AppendJsonQuoted(text, e.verdict.reason);
    text += e.trial_passed ? ",true]" : ",false]";
  }
  text += "]}\n";

  const std::filesystem::path target(path_);
  std::error_code ec;
  if (target.has_parent_path()) std::filesystem::create_directories(target.parent_path(), ec);
  // No fsync: a torn file after a power loss fails to parse and is rebuilt, which is cheaper
  // than a sync on every save.
  if (Status written = WriteFileAtomic(path_, text, {.mode = 0600, .sync = false}); !written.ok()) {
    return written.WithContext("saving the plugin scan cache");
  }
  return Status::Ok();
}

}  // namespace talaria::plugins
