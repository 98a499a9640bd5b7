// Charset detection and conversion (charset.h).
#include "talaria/web/charset.h"

#include <errno.h>
#include <iconv.h>

#include <string>
#include <string_view>
#include <utility>

#include "talaria/base/ascii.h"
#include "talaria/base/strings.h"
#include "talaria/base/utf8.h"

namespace talaria::web {
namespace {

// The value of `name=` in a header-like parameter list or a meta tag's text ("charset=utf-8",
// "charset=\"x\""), lower case; empty when absent.
std::string ParamValue(std::string_view text, std::string_view name) {
  const std::string lower = AsciiLower(text);
  size_t at = 0;
  while ((at = lower.find(name, at)) != std::string::npos) {
    size_t p = at + name.size();
    while (p < lower.size() && (lower[p] == ' ' || lower[p] == '\t')) ++p;
    if (p >= lower.size() || lower[p] != '=') {
      at = p;
      continue;
    }
    ++p;
    while (p < lower.size() && (lower[p] == ' ' || lower[p] == '\t')) ++p;
    if (p < lower.size() && (lower[p] == '"' || lower[p] == '\'')) ++p;
    size_t end = p;
    while (end < lower.size() && lower[end] != '"' && lower[end] != '\'' && lower[end] != ';' &&
           lower[end] != ' ' && lower[end] != '>' && lower[end] != '/') {
      ++end;
    }
    return lower.substr(p, end - p);
  }
  return "";
}

// A label browsers treat as another encoding (WHATWG Encoding: latin1 and ascii mean
// windows-1252).
std::string Canonical(std::string label) {
  if (label == "latin1" || label == "iso-8859-1" || label == "ascii" || label == "us-ascii" ||
      label == "iso8859-1" || label == "l1") {
    return "windows-1252";
  }
  if (label == "utf8") return "utf-8";
  return label;
}

// The iconv charset that decodes what a label means on the web (WHATWG Encoding): sites that
// say gb2312 write GBK, Shift_JIS means Microsoft's CP932 and EUC-KR its CP949, big5 is
// Big5-HKSCS, and iso-8859-9 and tis-620 are their Windows supersets. iconv's strict charsets
// of those names turn the extra characters (most Chinese pages have some) into U+FFFD.
std::string IconvName(std::string_view label) {
  static constexpr std::pair<std::string_view, std::string_view> kSupersets[] = {
      {"gb2312", "GB18030"},       {"gbk", "GB18030"},       {"x-gbk", "GB18030"},
      {"chinese", "GB18030"},      {"csgb2312", "GB18030"},  {"gb_2312", "GB18030"},
      {"gb_2312-80", "GB18030"},   {"iso-ir-58", "GB18030"}, {"csiso58gb231280", "GB18030"},
      {"shift_jis", "CP932"},      {"shift-jis", "CP932"},   {"sjis", "CP932"},
      {"x-sjis", "CP932"},         {"ms_kanji", "CP932"},    {"csshiftjis", "CP932"},
      {"windows-31j", "CP932"},    {"ms932", "CP932"},       {"euc-kr", "CP949"},
      {"cseuckr", "CP949"},        {"korean", "CP949"},      {"ks_c_5601-1987", "CP949"},
      {"ks_c_5601-1989", "CP949"}, {"ksc5601", "CP949"},     {"ksc_5601", "CP949"},
      {"iso-ir-149", "CP949"},     {"windows-949", "CP949"}, {"big5", "BIG5-HKSCS"},
      {"cn-big5", "BIG5-HKSCS"},   {"csbig5", "BIG5-HKSCS"}, {"x-x-big5", "BIG5-HKSCS"},
      {"iso-8859-9", "CP1254"},    {"latin5", "CP1254"},     {"l5", "CP1254"},
      {"iso8859-9", "CP1254"},     {"tis-620", "CP874"},     {"iso-8859-11", "CP874"},
      {"iso8859-11", "CP874"},     {"windows-874", "CP874"}, {"dos-874", "CP874"},
  };
  for (const auto& [name, superset] : kSupersets) {
    if (label == name) return std::string(superset);
  }
  return std::string(label);
}

bool ValidLabel(std::string_view label) {
  if (label.empty() || label.size() > 40) return false;
  for (char c : label) {
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '-' || c == '_' || c == '.' ||
          c == ':')) {
      return false;
    }
  }
  return true;
}

}  // namespace

std::string MediaType(std::string_view content_type) {
  const size_t semi = content_type.find(';');
  return AsciiLower(Trim(content_type.substr(0, semi)));
}

std::string DetectCharset(std::string_view body, std::string_view content_type, bool is_html) {
  if (body.starts_with("\xEF\xBB\xBF")) return "utf-8";
  if (body.starts_with("\xFF\xFE")) return "utf-16le";
  if (body.starts_with("\xFE\xFF")) return "utf-16be";
  std::string declared = ParamValue(content_type, "charset");
  if (ValidLabel(declared)) return Canonical(declared);
  if (is_html) {
    const std::string_view head = body.substr(0, 1024);
    const std::string lower = AsciiLower(head);
    size_t at = 0;
    while ((at = lower.find("<meta", at)) != std::string::npos) {
      const size_t end = lower.find('>', at);
      const std::string_view tag(lower.data() + at,
                                 (end == std::string::npos ? lower.size() : end) - at);
      declared = ParamValue(tag, "charset");
      // <meta charset="x"> or <meta http-equiv="content-type" content="text/html; charset=x">
      if (ValidLabel(declared)) {
        // A page served as bytes cannot really be UTF-16 when its meta says so (HTML spec).
        if (declared.starts_with("utf-16")) return "utf-8";
        return Canonical(declared);
      }
      at += 5;
    }
  }
  return IsValidUtf8(body) ? "utf-8" : "windows-1252";
}

Result<std::string> DecodeToUtf8(std::string_view body, std::string_view charset) {
  if (charset == "utf-8") {
    if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
    if (IsValidUtf8(body)) return std::string(body);
  }
  if ((charset == "utf-16le" && body.starts_with("\xFF\xFE")) ||
      (charset == "utf-16be" && body.starts_with("\xFE\xFF"))) {
    body.remove_prefix(2);
  }
  const std::string from = IconvName(AsciiLower(charset));
  iconv_t cd = iconv_open("UTF-8", from.c_str());
  if (cd == reinterpret_cast<iconv_t>(-1)) {  // NOLINT(performance-no-int-to-ptr): iconv's error
    return Err(InvalidArgumentError("unknown charset '" + std::string(charset) + "'"));
  }
  std::string out;
  out.reserve(body.size() + body.size() / 4);
  char buf[16384];
  // NOLINTNEXTLINE(cppcoreguidelines-pro-type-const-cast): iconv's signature predates const
  char* in = const_cast<char*>(body.data());
  size_t in_left = body.size();
  while (in_left > 0) {
    char* o = buf;
    size_t o_left = sizeof(buf);
    const size_t rc = iconv(cd, &in, &in_left, &o, &o_left);
    out.append(buf, sizeof(buf) - o_left);
    if (rc == static_cast<size_t>(-1)) {
      if (errno == E2BIG) continue;
      // EILSEQ or EINVAL (a sequence cut off at the end): one U+FFFD, skip a byte, go on.
      out += "\xEF\xBF\xBD";
      ++in;
      --in_left;
      iconv(cd, nullptr, nullptr, nullptr, nullptr);
    }
  }
  iconv_close(cd);
  return out;
}

}  // namespace talaria::web
