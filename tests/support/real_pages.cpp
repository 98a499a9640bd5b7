// The real pages and their scoring (real_pages.h).
#include "support/real_pages.h"

#include <zlib.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>
#include <vector>

#include "support/file_text.h"
#include "talaria/web/charset.h"

namespace talaria::test_support {
namespace {

// The whole of a gzip file, or "" when it cannot be read.
std::string GunzipFile(const std::string& path) {
  gzFile file = gzopen(path.c_str(), "rb");
  if (file == nullptr) return "";
  std::string out;
  char buf[65536];
  int n = 0;
  while ((n = gzread(file, buf, sizeof buf)) > 0) out.append(buf, static_cast<size_t>(n));
  const bool ok = n == 0;
  gzclose(file);
  return ok ? out : "";
}

// The length of the white space at `text[i]` (ASCII, U+00A0, U+2000-U+200B, U+2028, U+2029,
// U+202F, U+205F, U+3000, U+FEFF), 0 when there is none.
size_t SpaceLength(std::string_view text, size_t i) {
  const auto c = static_cast<unsigned char>(text[i]);
  if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v') return 1;
  const auto at = [&](size_t k) {
    return i + k < text.size() ? static_cast<unsigned char>(text[i + k]) : 0;
  };
  if (c == 0xC2 && at(1) == 0xA0) return 2;
  if (c == 0xE2 && at(1) == 0x80 &&
      (at(2) <= 0x8B || at(2) == 0xA8 || at(2) == 0xA9 || at(2) == 0xAF)) {
    return 3;
  }
  if (c == 0xE2 && at(1) == 0x81 && at(2) == 0x9F) return 3;
  if (c == 0xE3 && at(1) == 0x80 && at(2) == 0x80) return 3;
  if (c == 0xEF && at(1) == 0xBB && at(2) == 0xBF) return 3;
  return 0;
}

}  // namespace

std::string RealPagesDir() { return std::string(TALARIA_SOURCE_DIR) + "/tests/data/real_pages"; }

std::vector<RealPage> LoadRealPages(const std::string& dir) {
  std::vector<RealPage> pages;
  const nlohmann::json gold =
      nlohmann::json::parse(ReadWholeFile(dir + "/gold.json"), nullptr, /*allow_exceptions=*/false);
  if (!gold.is_array()) return pages;
  for (const auto& g : gold) {
    RealPage page;
    page.name = g.value("name", "");
    page.split = g.value("split", "");
    page.kind = g.value("kind", "");
    page.lang = g.value("lang", "");
    page.url = g.value("url", "");
    page.content_type = g.value("content_type", "");
    page.main = g.value("main", std::vector<std::string>{});
    page.boilerplate = g.value("boilerplate", std::vector<std::string>{});
    page.bytes = GunzipFile(dir + "/pages/" + page.name + ".html.gz");
    if (page.name.empty() || page.bytes.empty()) return {};
    pages.push_back(std::move(page));
  }
  return pages;
}

std::string RealPageUtf8(const RealPage& page) {
  const std::string charset = web::DetectCharset(page.bytes, page.content_type, true);
  auto decoded = web::DecodeToUtf8(page.bytes, charset);
  return decoded ? *decoded : page.bytes;
}

std::string NormalizeForScoring(std::string_view text) {
  std::string out;
  out.reserve(text.size());
  bool space = false;
  for (size_t i = 0; i < text.size();) {
    if (text[i] == ']' && i + 1 < text.size() && text[i + 1] == '(') {
      const size_t close = text.find(')', i + 2);
      if (close != std::string_view::npos) {
        i = close + 1;
        continue;
      }
    }
    if (const size_t n = SpaceLength(text, i); n > 0) {
      space = true;
      i += n;
      continue;
    }
    if (std::strchr("*`#>|[]!_\\", text[i]) != nullptr) {
      ++i;
      continue;
    }
    if (space && !out.empty()) out += ' ';
    space = false;
    out += text[i++];
  }
  return out;
}

void SnippetCounts::Add(const SnippetCounts& other) {
  tp += other.tp;
  fp += other.fp;
  fn += other.fn;
}

double SnippetCounts::Precision() const {
  return tp + fp > 0 ? static_cast<double>(tp) / (tp + fp) : 0;
}

double SnippetCounts::Recall() const {
  return tp + fn > 0 ? static_cast<double>(tp) / (tp + fn) : 0;
}

double SnippetCounts::F() const {
  const double p = Precision();
  const double r = Recall();
  return p + r > 0 ? 2 * p * r / (p + r) : 0;
}

SnippetCounts ScoreExtraction(const RealPage& page, std::string_view normalized_output,
                              std::vector<std::string>* missing, std::vector<std::string>* leaked) {
  SnippetCounts c;
  for (const auto& s : page.main) {
    if (normalized_output.find(NormalizeForScoring(s)) != std::string_view::npos) {
      ++c.tp;
    } else {
      ++c.fn;
      if (missing != nullptr) missing->push_back(s);
    }
  }
  for (const auto& s : page.boilerplate) {
    if (normalized_output.find(NormalizeForScoring(s)) != std::string_view::npos) {
      ++c.fp;
      if (leaked != nullptr) leaked->push_back(s);
    }
  }
  return c;
}

}  // namespace talaria::test_support
