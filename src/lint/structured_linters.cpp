// JSON, YAML and TOML checks. Third-party parsers that throw (yaml-cpp, toml++) are wrapped
// here; nothing escapes.
#include <algorithm>
#include <charconv>
#include <cstdint>
#include <functional>
#include <new>
#include <streambuf>
#include <string>
#include <unordered_map>

#include <toml++/toml.h>
#include <yaml-cpp/depthguard.h>
#include <yaml-cpp/eventhandler.h>
#include <yaml-cpp/exceptions.h>
#include <yaml-cpp/mark.h>
#include <yaml-cpp/parser.h>
#include <nlohmann/json.hpp>

#include "lint/linters.h"
#include "talaria/base/json.h"

namespace talaria::lint_internal {
namespace {

// ---- JSON ------------------------------------------------------------------------------------

bool ParseInt(std::string_view s, int& out) {
  const auto [ptr, ec] = std::from_chars(s.data(), s.data() + s.size(), out);
  return ec == std::errc() && ptr == s.data() + s.size();
}

// Splits nlohmann's "[json.exception.parse_error.101] parse error at line 3, column 1: <what>"
// into its position and <what>. False when the text has no position.
bool SplitNlohmannMessage(std::string_view text, int& line, int& column, std::string_view& what) {
  constexpr std::string_view kAt = "at line ";
  const size_t at = text.find(kAt);
  if (at == std::string_view::npos) return false;
  const size_t comma = text.find(", column ", at);
  const size_t colon = comma == std::string_view::npos ? comma : text.find(": ", comma);
  if (colon == std::string_view::npos) return false;
  const size_t line_start = at + kAt.size();
  const size_t col_start = comma + 9;
  if (!ParseInt(text.substr(line_start, comma - line_start), line) ||
      !ParseInt(text.substr(col_start, colon - col_start), column)) {
    return false;
  }
  what = text.substr(colon + 2);
  return true;
}

// 1-based line and 0-based byte offset within it of content[offset].
std::pair<int, int> LineAndByte(std::string_view content, size_t offset) {
  offset = std::min(offset, content.size());
  const std::string_view head = content.substr(0, offset);
  const int line = 1 + static_cast<int>(std::count(head.begin(), head.end(), '\n'));
  const size_t nl = head.rfind('\n');
  const size_t line_start = nl == std::string_view::npos ? 0 : nl + 1;
  return {line, static_cast<int>(offset - line_start)};
}

// Length in bytes of 1-based `line` (0 when the text has fewer lines).
int LineLength(std::string_view content, int line) {
  size_t start = 0;
  for (int l = 1; l < line; ++l) {
    const size_t nl = content.find('\n', start);
    if (nl == std::string_view::npos) return 0;
    start = nl + 1;
  }
  const size_t end = content.find('\n', start);
  return static_cast<int>((end == std::string_view::npos ? content.size() : end) - start);
}

// A SAX consumer that accepts every value and keeps the first parse error's text.
struct JsonErrorCatcher final : nlohmann::json_sax<Json> {
  std::string error;

  bool null() override { return true; }
  bool boolean(bool) override { return true; }
  bool number_integer(number_integer_t) override { return true; }
  bool number_unsigned(number_unsigned_t) override { return true; }
  bool number_float(number_float_t, const string_t&) override { return true; }
  bool string(string_t&) override { return true; }
  bool binary(binary_t&) override { return true; }
  bool start_object(std::size_t) override { return true; }
  bool key(string_t&) override { return true; }
  bool end_object() override { return true; }
  bool start_array(std::size_t) override { return true; }
  bool end_array() override { return true; }
  bool parse_error(std::size_t, const std::string&,
                   const nlohmann::detail::exception& ex) override {
    error = ex.what();
    return false;
  }
};

// ---- YAML ------------------------------------------------------------------------------------

// A read-only streambuf over the caller's bytes (yaml-cpp wants an istream; no copy).
class ViewStreamBuf : public std::streambuf {
 public:
  explicit ViewStreamBuf(std::string_view text) {
    char* p = const_cast<char*>(text.data());  // never written: the buffer is get-only
    setg(p, p, p + text.size());
  }
};

class NullStream : public std::istream {
 public:
  explicit NullStream(std::streambuf* buf) : std::istream(buf) {}
};

// Identity of a mapping key for duplicate detection, following YAML 1.2's core schema closely
// enough that `a` and "a" collide while `1` and "1" (int vs str) do not. Empty = not checked.
std::string KeyIdentity(const std::string& tag, const std::string& value) {
  if (tag == "!" || tag == "tag:yaml.org,2002:str") return "s:" + value;
  if (tag != "?") return "t:" + tag + "\x1f" + value;
  // Plain scalar: resolve the common non-string forms.
  if (value == "<<") return {};  // merge key: repeating it is a common (if loose) idiom
  if (value.empty() || value == "~" || value == "null" || value == "Null" || value == "NULL") {
    return "n:";
  }
  if (value == "true" || value == "True" || value == "TRUE") return "b:1";
  if (value == "false" || value == "False" || value == "FALSE") return "b:0";
  const char c = value[0];
  const bool numeric = (c >= '0' && c <= '9') ||
                       ((c == '-' || c == '+' || c == '.') && value.size() > 1 &&
                        ((value[1] >= '0' && value[1] <= '9') || value[1] == '.' ||
                         value[1] == 'i' || value[1] == 'I' || value[1] == 'n' || value[1] == 'N'));
  return (numeric ? "v:" : "s:") + value;
}

// Walks the event stream with an explicit stack (no recursion on our side) and records keys
// repeated within one mapping.
class DuplicateKeyFinder final : public YAML::EventHandler {
 public:
  explicit DuplicateKeyFinder(std::vector<LintIssue>& issues) : issues_(issues) {}

  void OnDocumentStart(const YAML::Mark&) override { frames_.clear(); }
  void OnDocumentEnd() override { frames_.clear(); }
  void OnNull(const YAML::Mark& mark, YAML::anchor_t) override { OnNode(mark, "n:", "null"); }
  void OnAlias(const YAML::Mark& mark, YAML::anchor_t) override { OnNode(mark, {}, {}); }
  void OnScalar(const YAML::Mark& mark, const std::string& tag, YAML::anchor_t,
                const std::string& value) override {
    OnNode(mark, KeyIdentity(tag, value), value);
  }
  void OnSequenceStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {
    OnNode(mark, {}, {});
    frames_.push_back(Frame{});
  }
  void OnSequenceEnd() override { Pop(); }
  void OnMapStart(const YAML::Mark& mark, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {
    OnNode(mark, {}, {});
    Frame f;
    f.is_map = true;
    frames_.push_back(std::move(f));
  }
  void OnMapEnd() override { Pop(); }

 private:
  struct Frame {
    bool is_map = false;
    bool expect_key = true;
    // Hash of the key identity -> 1-based line of its first occurrence.
    std::unordered_map<uint64_t, int> keys;
  };

  void Pop() {
    if (!frames_.empty()) frames_.pop_back();
  }

  // A node starts at `mark`; when it is a key of the enclosing mapping, check it.
  void OnNode(const YAML::Mark& mark, const std::string& identity, const std::string& shown) {
    if (frames_.empty() || !frames_.back().is_map) return;
    Frame& f = frames_.back();
    const bool is_key = f.expect_key;
    f.expect_key = !f.expect_key;
    if (!is_key || identity.empty()) return;
    const int line = mark.line >= 0 ? mark.line + 1 : 0;
    const auto [it, inserted] = f.keys.emplace(std::hash<std::string>{}(identity), line);
    if (inserted || issues_.size() >= kMaxIssues) return;
    LintIssue issue;
    issue.line = line;
    issue.column = mark.column >= 0 ? mark.column : -1;  // byte offset; converted by the caller
    issue.message = "duplicate key \"" + CleanMessage(shown, 80) +
                    "\" in mapping (first defined on line " + std::to_string(it->second) + ")";
    issue.kind = "DuplicateKeyError";
    issue.category = LintIssue::Category::kDuplicateKey;
    issues_.push_back(std::move(issue));
  }

  std::vector<LintIssue>& issues_;
  std::vector<Frame> frames_;
};

}  // namespace

std::vector<LintIssue> LintJsonText(std::string_view content) {
  std::vector<LintIssue> encoding = CheckEncoding(content, /*check_utf8=*/true);
  if (!encoding.empty()) return encoding;
  LintIssue issue;
  issue.kind = "JSONDecodeError";
  // ParseJson's nesting limit, with the position it does not report.
  if (const size_t at = JsonNestingOverflowOffset(content); at != std::string_view::npos) {
    const auto [line, byte] = LineAndByte(content, at);
    issue.line = line;
    issue.column = CharColumn(content, line, byte);
    issue.message = "nesting deeper than " + std::to_string(kMaxJsonDepth) + " levels";
    return {std::move(issue)};
  }
  // Then ParseJson's grammar (the same nlohmann parser) through its SAX interface: no DOM is
  // built, so a 10 MB file validates in tens of milliseconds and reports its first error.
  JsonErrorCatcher catcher;
  bool parsed = false;
  try {
    parsed = Json::sax_parse(content.begin(), content.end(), &catcher);
  } catch (const std::exception& e) {  // bad_alloc; parse errors go to the catcher
    catcher.error = e.what();
  }
  if (parsed) return {};
  if (catcher.error.empty()) catcher.error = "invalid JSON";
  int line = 0;
  int column = 0;
  std::string_view what;
  if (SplitNlohmannMessage(catcher.error, line, column, what)) {
    // nlohmann counts the '\n' that ended a line as column 0 of the next one.
    if (column == 0 && line > 1) {
      --line;
      column = LineLength(content, line) + 1;
    }
    issue.line = line;
    issue.column = CharColumn(content, line, std::max(column, 1) - 1);
    issue.message = CleanMessage(what);
  } else {
    issue.message = CleanMessage(catcher.error);
  }
  return {std::move(issue)};
}

std::vector<LintIssue> LintYamlText(std::string_view content) {
  std::vector<LintIssue> encoding = CheckEncoding(content, /*check_utf8=*/true);
  if (!encoding.empty()) return encoding;
  std::vector<LintIssue> issues;
  ViewStreamBuf buf(content);
  NullStream in(&buf);
  DuplicateKeyFinder finder(issues);
  try {
    YAML::Parser parser(in);
    while (parser.HandleNextDocument(finder)) {
    }
  } catch (const YAML::Exception& e) {
    const bool has_mark = e.mark.line >= 0;
    // yaml-cpp's depth guard (500 levels) reports itself as "bad file".
    const bool too_deep = dynamic_cast<const YAML::DeepRecursion*>(&e) != nullptr;
    issues.push_back(LintIssue{has_mark ? e.mark.line + 1 : 0, has_mark ? e.mark.column : -1,
                               too_deep ? "nesting too deep" : CleanMessage(e.msg), "YAMLError",
                               LintIssue::Category::kSyntax});
  } catch (const std::bad_alloc&) {
    issues.push_back(
        LintIssue{0, -1, "out of memory while parsing", "YAMLError", LintIssue::Category::kSyntax});
  } catch (const std::exception& e) {
    issues.push_back(
        LintIssue{0, -1, CleanMessage(e.what()), "YAMLError", LintIssue::Category::kSyntax});
  }
  // yaml-cpp marks are 0-based byte columns; report characters.
  for (LintIssue& issue : issues) {
    issue.column =
        issue.line > 0 && issue.column >= 0 ? CharColumn(content, issue.line, issue.column) : 0;
  }
  return issues;
}

std::vector<LintIssue> LintTomlText(std::string_view content, std::string_view path) {
  std::vector<LintIssue> encoding = CheckEncoding(content, /*check_utf8=*/true);
  if (!encoding.empty()) return encoding;
  try {
    toml::table table = toml::parse(content, path);
    (void)table;
  } catch (const toml::parse_error& e) {
    const toml::source_region& where = e.source();
    return {LintIssue{static_cast<int>(where.begin.line), static_cast<int>(where.begin.column),
                      CleanMessage(e.description()), "TOMLDecodeError",
                      LintIssue::Category::kSyntax}};
  } catch (const std::bad_alloc&) {
    return {LintIssue{0, 0, "out of memory while parsing", "TOMLDecodeError",
                      LintIssue::Category::kSyntax}};
  } catch (const std::exception& e) {
    return {
        LintIssue{0, 0, CleanMessage(e.what()), "TOMLDecodeError", LintIssue::Category::kSyntax}};
  }
  return {};
}

}  // namespace talaria::lint_internal
