#include "plugins/plugin_probe.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <thread>

#include "talaria/base/unique_fd.h"
#include "talaria/plugins/script_tool.h"

namespace talaria::plugins {
namespace {

// openat for a pre-scan (see ProbeContext::noatime).
int OpenForScan(const ProbeContext& ctx, const char* file) {
  constexpr int kFlags = O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY;
  if (ctx.noatime->load(std::memory_order_relaxed)) {
    const int fd = ::openat(ctx.dir_fd, file, kFlags | O_NOATIME);
    if (fd >= 0 || errno != EPERM) return fd;
    ctx.noatime->store(false, std::memory_order_relaxed);
  }
  return ::openat(ctx.dir_fd, file, kFlags);
}

void Name(const ProbeContext& ctx, Probe& p) {
  const std::string& file = *p.file;
  p.c.path.reserve(ctx.prefix->size() + file.size());
  p.c.path.append(*ctx.prefix).append(file);
  ManifestFormat format;
  std::string_view stem;
  if (ManifestFormatOf(file, format, stem)) {
    p.c.kind = CandidateKind::kScript;
    p.c.name = std::string(stem);
  } else {
    p.c.name = file.substr(0, file.size() - kSuffix.size());
  }
  p.disabled = Listed(ctx.options->disabled, p.c.name);
}

void ProbeOne(const ProbeContext& ctx, Probe& p) {
  Name(ctx, p);
  if (p.disabled || p.c.kind == CandidateKind::kScript) return;  // manifests: LoadScript
  const char* file = p.file->c_str();
  const VerdictCache& cache = *ctx.cache;
  if (cache.Contains(p.c.path) && ::fstatat(ctx.dir_fd, file, &p.st, 0) == 0 &&
      S_ISREG(p.st.st_mode)) {
    if (auto v = cache.Find(p.c.path, KeyOf(p.st))) {
      p.verdict = std::move(*v);
      p.cached = true;
    }
  }
  if (!p.cached) {
    UniqueFd fd(OpenForScan(ctx, file));
    if (!fd) {
      p.verdict = ScanVerdict{ScanOutcome::kIoError,
                              std::string("cannot open: ") + std::strerror(errno), 0};
    } else if (::fstat(fd.get(), &p.st) != 0 || !S_ISREG(p.st.st_mode)) {
      p.verdict = ScanVerdict{ScanOutcome::kIoError, "not a regular file", 0};
    } else {
      p.verdict = ScanPluginFd(fd.get(), static_cast<uint64_t>(p.st.st_size));
    }
  }
  p.c.scan = p.verdict.outcome;
  p.c.scan_cached = p.cached;
  p.c.interface_version = p.verdict.interface_version;
  if (!p.verdict.accepted()) {
    p.c.reason.reserve(10 + p.verdict.reason.size());
    p.c.reason.append("pre-scan: ").append(p.verdict.reason);
  } else if (ctx.options->mode == LoadMode::kScanOnly) {
    p.c.reason = "not loaded (scan only)";
  }
}

}  // namespace

void ProbeAll(const ProbeContext& ctx, std::vector<Probe>& probes) {
  constexpr size_t kPerThreadMinimum = 64;
  constexpr size_t kChunk = 16;
  const size_t hw = std::max(1u, std::thread::hardware_concurrency());
  const size_t threads = std::min<size_t>({hw, 4, probes.size() / kPerThreadMinimum});
  if (threads <= 1) {
    for (Probe& p : probes) ProbeOne(ctx, p);
    return;
  }
  std::atomic<size_t> next{0};
  auto work = [&] {
    for (size_t begin; (begin = next.fetch_add(kChunk)) < probes.size();) {
      const size_t end = std::min(begin + kChunk, probes.size());
      for (size_t i = begin; i < end; ++i) ProbeOne(ctx, probes[i]);
    }
  };
  std::vector<std::jthread> helpers;
  for (size_t i = 1; i < threads; ++i) helpers.emplace_back(work);
  work();
}  // helpers join here

}  // namespace talaria::plugins
