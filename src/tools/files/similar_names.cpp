#include "tools/files/similar_names.h"

#include <dirent.h>
#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

namespace talaria::tools {

double NameSimilarity(std::string_view a, std::string_view b) {
  if (a.empty() && b.empty()) return 1.0;
  std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
  for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
  for (size_t i = 1; i <= a.size(); ++i) {
    cur[0] = i;
    for (size_t j = 1; j <= b.size(); ++j) {
      const bool same = std::tolower(static_cast<unsigned char>(a[i - 1])) ==
                        std::tolower(static_cast<unsigned char>(b[j - 1]));
      cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, prev[j - 1] + (same ? 0 : 1)});
    }
    std::swap(prev, cur);
  }
  return 1.0 -
         static_cast<double>(prev[b.size()]) / static_cast<double>(std::max(a.size(), b.size()));
}

std::vector<std::string> SimilarFiles(const safety::Workspace& ws, std::string_view path,
                                      size_t max) {
  const size_t slash = path.rfind('/');
  const std::string dir =
      slash == std::string_view::npos ? "." : std::string(path.substr(0, slash == 0 ? 1 : slash));
  const std::string prefix =
      slash == std::string_view::npos ? "" : std::string(path.substr(0, slash + 1));
  const std::string_view wanted = slash == std::string_view::npos ? path : path.substr(slash + 1);
  auto fd = ws.OpenDir(dir);
  if (!fd) return {};
  const int dup_fd = ::fcntl(fd->get(), F_DUPFD_CLOEXEC, 0);
  if (dup_fd < 0) return {};
  DIR* d = ::fdopendir(dup_fd);
  if (d == nullptr) {
    ::close(dup_fd);
    return {};
  }
  std::vector<std::pair<double, std::string>> scored;
  // A directory with very many entries is not worth ranking in full.
  size_t seen = 0;
  while (dirent* e = ::readdir(d)) {
    if (++seen > 20'000) break;
    std::string_view name = e->d_name;
    if (name == "." || name == "..") continue;
    double score = NameSimilarity(wanted, name);
    if (!wanted.empty() && (name.find(wanted) != std::string_view::npos ||
                            wanted.find(name) != std::string_view::npos)) {
      score = std::max(score, 0.6);
    }
    if (score >= 0.5) scored.emplace_back(score, std::string(name));
  }
  ::closedir(d);
  std::sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) {
    return x.first != y.first ? x.first > y.first : x.second < y.second;
  });
  std::vector<std::string> out;
  for (size_t i = 0; i < scored.size() && i < max; ++i) out.push_back(prefix + scored[i].second);
  return out;
}

}  // namespace talaria::tools
