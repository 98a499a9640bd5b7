#include "talaria/editing/v4a.h"

#include <algorithm>
#include <array>
#include <map>
#include <string>
#include <utility>

#include "talaria/editing/unified_diff.h"

namespace talaria::editing {
namespace {

constexpr std::string_view kSpaces = " \t";

std::string_view TrimSpaces(std::string_view s) {
  size_t b = s.find_first_not_of(kSpaces);
  if (b == s.npos) return {};
  size_t e = s.find_last_not_of(kSpaces);
  return s.substr(b, e - b + 1);
}

// Consumes `words` from the front of `rest`, any run of spaces between and before them.
bool ConsumeWords(std::string_view& rest, const std::array<std::string_view, 3>& words) {
  std::string_view r = rest;
  for (std::string_view w : words) {
    if (w.empty()) break;
    size_t skip = r.find_first_not_of(kSpaces);
    if (skip == r.npos) return false;
    r.remove_prefix(skip);
    if (r.substr(0, w.size()) != w) return false;
    r.remove_prefix(w.size());
  }
  rest = r;
  return true;
}

enum class HeaderKind : unsigned char {
  kNone,
  kBegin,
  kEnd,
  kUpdate,
  kAdd,
  kDelete,
  kMove,
  kMoveTo,
  kEndOfFile,
  kUnknown,
};

struct Header {
  HeaderKind kind = HeaderKind::kNone;
  std::string_view argument;  // the path part, untrimmed
};

// A header is a line starting with "***" at column 0.
Header ParseHeader(std::string_view line) {
  if (line.substr(0, 3) != "***") return {};
  std::string_view rest = line.substr(3);
  struct Form {
    HeaderKind kind;
    std::array<std::string_view, 3> words;  // unused slots are empty
    bool takes_argument;
  };
  static const Form kForms[] = {
      {HeaderKind::kBegin, {"Begin", "Patch"}, false},
      {HeaderKind::kEndOfFile, {"End", "of", "File"}, false},
      {HeaderKind::kEnd, {"End", "Patch"}, false},
      {HeaderKind::kUpdate, {"Update", "File:"}, true},
      {HeaderKind::kAdd, {"Add", "File:"}, true},
      {HeaderKind::kDelete, {"Delete", "File:"}, true},
      {HeaderKind::kMove, {"Move", "File:"}, true},
      {HeaderKind::kMoveTo, {"Move", "to:"}, true},
  };
  for (const Form& form : kForms) {
    std::string_view r = rest;
    if (!ConsumeWords(r, form.words)) continue;
    if (!form.takes_argument && !TrimSpaces(r).empty()) continue;
    return {form.kind, r};
  }
  return {HeaderKind::kUnknown, rest};
}

// Problems with a path named in a header, or "" when it is acceptable.
std::string CheckPath(std::string_view path) {
  if (path.empty()) return "empty file path";
  if (path.find('\0') != path.npos) return "file path contains a NUL byte";
  size_t start = 0;
  while (start <= path.size()) {
    size_t slash = path.find('/', start);
    if (slash == path.npos) slash = path.size();
    if (path.substr(start, slash - start) == "..") {
      return "path '" + std::string(path) +
             "' contains a '..' component; name files inside the workspace without traversal";
    }
    start = slash + 1;
  }
  return {};
}

class Parser {
 public:
  Result<std::vector<V4aOperation>> Parse(std::string_view patch) {
    std::vector<std::string_view> lines;
    for (size_t start = 0; start <= patch.size();) {
      size_t nl = patch.find('\n', start);
      if (nl == patch.npos) nl = patch.size();
      std::string_view line = patch.substr(start, nl - start);
      if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
      lines.push_back(line);
      start = nl + 1;
    }
    size_t first = 0, last = lines.size();
    bool have_begin = false;
    for (size_t i = 0; i < lines.size(); ++i) {
      HeaderKind k = ParseHeader(lines[i]).kind;
      if (k == HeaderKind::kBegin && !have_begin) {
        have_begin = true;
        first = i + 1;
      } else if (k == HeaderKind::kEnd) {
        last = i;
        break;
      }
    }
    if (have_begin && last == lines.size()) {
      Problem(0,
              "missing '*** End Patch' after '*** Begin Patch' (the patch looks truncated; "
              "send it whole)");
    }
    for (size_t i = first; i < last; ++i) Line(i + 1, lines[i]);
    CloseOperation();
    if (ops_.empty() && problems_.empty()) Problem(0, "the patch contains no operations");
    if (!problems_.empty()) {
      std::string message = "Parse error: ";
      if (problems_.size() == 1) {
        message += problems_.front();
      } else {
        for (const auto& p : problems_) message += "\n  \xE2\x80\xA2 " + p;  // "•"
      }
      return Err(InvalidArgumentError(std::move(message)));
    }
    return std::move(ops_);
  }

 private:
  void Problem(size_t line_no, std::string text) {
    problems_.push_back(line_no == 0 ? std::move(text)
                                     : "line " + std::to_string(line_no) + ": " + text);
  }

  void CloseHunk() {
    if (!current_ || !hunk_open_) return;
    // Empty lines right before the next marker are separators, not context.
    hunk_.lines.resize(hunk_.lines.size() - trailing_blank_);
    trailing_blank_ = 0;
    if (!hunk_.lines.empty() || hunk_.end_of_file) current_->hunks.push_back(std::move(hunk_));
    hunk_ = V4aHunk{};
    hunk_open_ = false;
  }

  void CloseOperation() {
    if (!current_) return;
    CloseHunk();
    if (current_->kind == V4aOpKind::kUpdate && current_->hunks.empty()) {
      Problem(current_line_, "Update File " + current_->path + ": no hunks found");
    }
    if (current_->kind == V4aOpKind::kAdd && current_->hunks.empty()) {
      current_->hunks.emplace_back();  // an empty new file
    }
    ops_.push_back(std::move(*current_));
    current_.reset();
  }

  void OpenOperation(size_t line_no, V4aOpKind kind, std::string path, std::string new_path = {}) {
    CloseOperation();
    current_ = V4aOperation{kind, std::move(path), std::move(new_path), {}};
    current_line_ = line_no;
    if (kind == V4aOpKind::kAdd) hunk_open_ = true;
  }

  void Line(size_t line_no, std::string_view line) {
    const Header header = ParseHeader(line);
    switch (header.kind) {
      case HeaderKind::kNone:
        break;
      case HeaderKind::kBegin:
        return;  // a repeated Begin is harmless
      case HeaderKind::kEnd:
        return;
      case HeaderKind::kUpdate:
      case HeaderKind::kAdd:
      case HeaderKind::kDelete: {
        std::string path(TrimSpaces(header.argument));
        if (std::string bad = CheckPath(path); !bad.empty()) Problem(line_no, bad);
        const V4aOpKind kind = header.kind == HeaderKind::kUpdate ? V4aOpKind::kUpdate
                               : header.kind == HeaderKind::kAdd  ? V4aOpKind::kAdd
                                                                  : V4aOpKind::kDelete;
        OpenOperation(line_no, kind, std::move(path));
        return;
      }
      case HeaderKind::kMove: {
        std::string_view arg = header.argument;
        size_t arrow = arg.find("->");
        if (arrow == arg.npos) {
          Problem(line_no, "Move File needs 'source -> destination'");
          OpenOperation(line_no, V4aOpKind::kMove, std::string(TrimSpaces(arg)));
          return;
        }
        std::string from(TrimSpaces(arg.substr(0, arrow)));
        std::string to(TrimSpaces(arg.substr(arrow + 2)));
        if (std::string bad = CheckPath(from); !bad.empty()) Problem(line_no, bad);
        if (std::string bad = CheckPath(to); !bad.empty()) Problem(line_no, bad);
        OpenOperation(line_no, V4aOpKind::kMove, std::move(from), std::move(to));
        return;
      }
      case HeaderKind::kMoveTo: {
        std::string to(TrimSpaces(header.argument));
        std::string from = current_ ? current_->path : std::string("<source>");
        Problem(line_no, "'*** Move to: " + to +
                             "' is not supported; rename with '*** Move File: " + from + " -> " +
                             to + "' and put any edits in their own '*** Update File:' block");
        return;
      }
      case HeaderKind::kEndOfFile:
        if (!current_ || current_->kind != V4aOpKind::kUpdate) {
          Problem(line_no, "'*** End of File' outside an Update File block");
          return;
        }
        if (!hunk_open_) {
          Problem(line_no, "'*** End of File' without a hunk before it");
          return;
        }
        hunk_.end_of_file = true;
        CloseHunk();
        return;
      case HeaderKind::kUnknown:
        Problem(line_no, "unrecognized header '" + std::string(line.substr(0, 80)) + "'");
        return;
    }

    if (!current_) {
      if (!TrimSpaces(line).empty()) {
        Problem(line_no,
                "content outside any file operation: '" + std::string(line.substr(0, 80)) + "'");
      }
      return;
    }
    switch (current_->kind) {
      case V4aOpKind::kDelete:
      case V4aOpKind::kMove:
        if (!TrimSpaces(line).empty()) {
          Problem(line_no, std::string(current_->kind == V4aOpKind::kDelete ? "Delete" : "Move") +
                               " File takes no content lines");
        }
        return;
      case V4aOpKind::kAdd:
        if (line.empty()) {
          AddLine(' ', "", /*implicit_blank=*/true);
        } else if (line[0] == '+') {
          AddLine('+', line.substr(1), false);
        } else {
          Problem(line_no,
                  "Add File " + current_->path + ": every content line must start with '+'");
        }
        return;
      case V4aOpKind::kUpdate:
        break;
    }
    if (line.substr(0, 2) == "@@") {
      CloseHunk();
      std::string_view hint = line.substr(2);
      if (hint.size() >= 2 && hint.substr(hint.size() - 2) == "@@") hint.remove_suffix(2);
      hunk_.context_hint = std::string(TrimSpaces(hint));
      hunk_open_ = true;
      return;
    }
    if (!hunk_open_) hunk_open_ = true;
    if (line.empty()) {
      AddLine(' ', "", /*implicit_blank=*/true);
    } else if (line[0] == ' ' || line[0] == '-' || line[0] == '+') {
      AddLine(line[0], line.substr(1), false);
    } else if (line[0] == '\\') {
      // "\ No newline at end of file"
    } else {
      AddLine(' ', line, false);  // context without its space prefix
    }
  }

  void AddLine(char prefix, std::string_view text, bool implicit_blank) {
    hunk_.lines.push_back({prefix, std::string(text)});
    trailing_blank_ = implicit_blank ? trailing_blank_ + 1 : 0;
  }

  std::vector<V4aOperation> ops_;
  std::vector<std::string> problems_;
  std::optional<V4aOperation> current_;
  size_t current_line_ = 0;
  V4aHunk hunk_;
  bool hunk_open_ = false;
  size_t trailing_blank_ = 0;
};

// ---------------------------------------------------------------------------------------------
// Planning

std::string Join(const std::vector<std::string>& lines) {
  std::string out;
  for (size_t i = 0; i < lines.size(); ++i) {
    if (i > 0) out.push_back('\n');
    out.append(lines[i]);
  }
  return out;
}

size_t CountOccurrences(std::string_view text, std::string_view needle) {
  if (needle.empty()) return 0;
  size_t n = 0;
  for (size_t pos = text.find(needle); pos != text.npos; pos = text.find(needle, pos + 1)) ++n;
  return n;
}

std::string HunkLabel(size_t index, const V4aHunk& hunk) {
  std::string label = "hunk " + std::to_string(index);
  if (!hunk.context_hint.empty()) label += " (@@ " + hunk.context_hint + " @@)";
  return label;
}

// Indents continuation lines of a multi-line problem under its bullet.
std::string Bullet(std::string_view text) {
  std::string out = "  \xE2\x80\xA2 ";  // "  • "
  for (char c : text) {
    out.push_back(c);
    if (c == '\n') out += "    ";
  }
  return out;
}

class Overlay {
 public:
  explicit Overlay(const V4aReader& read) : read_(read) {}

  // The current content of `path`, nullopt when absent; an error when it cannot be told.
  Result<std::optional<std::string>> Get(const std::string& path) {
    auto it = state_.find(path);
    if (it != state_.end()) return it->second;
    auto e = errors_.find(path);
    if (e != errors_.end()) return Err(e->second);
    Result<std::optional<std::string>> got =
        read_ ? read_(path) : Result<std::optional<std::string>>(std::nullopt);
    if (!got) {
      errors_.emplace(path, got.error());
      return got;
    }
    state_.emplace(path, *got);
    return got;
  }

  void Set(const std::string& path, std::optional<std::string> content) {
    errors_.erase(path);
    state_[path] = std::move(content);
  }

 private:
  const V4aReader& read_;
  std::map<std::string, std::optional<std::string>> state_;
  std::map<std::string, Status> errors_;
};

struct HunkOutcome {
  std::string content;
  MatchStrategy strategy = MatchStrategy::kExact;
  double similarity = 1.0;
  bool changed = false;
  bool already_applied = false;
  bool located = false;  // a real (changing) hunk that was placed
};

class Planner {
 public:
  explicit Planner(const V4aReader& read) : overlay_(read) {}

  Result<V4aPlan> Plan(const std::vector<V4aOperation>& ops) {
    for (const V4aOperation& op : ops) {
      switch (op.kind) {
        case V4aOpKind::kUpdate:
          PlanUpdate(op);
          break;
        case V4aOpKind::kAdd:
          PlanAdd(op);
          break;
        case V4aOpKind::kDelete:
          PlanDelete(op);
          break;
        case V4aOpKind::kMove:
          PlanMove(op);
          break;
      }
    }
    if (problems_.empty() && plan_.steps.empty() && already_applied_ == 0) {
      problems_.push_back(
          "Patch contains no changes (only context lines were given, or '-' and '+' lines are "
          "identical)");
    }
    if (!problems_.empty()) {
      std::string message = "Patch validation failed (no files were modified):";
      for (const auto& p : problems_) message += "\n" + Bullet(p);
      return Err(FailedPreconditionError(std::move(message)));
    }
    for (V4aStep& step : plan_.steps) plan_.diff += step.diff;
    return std::move(plan_);
  }

 private:
  void Problem(std::string text) { problems_.push_back(std::move(text)); }

  void AddStep(V4aStep step) {
    switch (step.kind) {
      case V4aOpKind::kUpdate:
        step.diff = UnifiedFileDiff(step.path, step.before.value_or(""), step.after.value_or(""));
        if (!Contains(plan_.files_modified, step.path) &&
            !Contains(plan_.files_created, step.path)) {
          plan_.files_modified.push_back(step.path);
        }
        break;
      case V4aOpKind::kAdd:
        step.diff = UnifiedDiff("", step.after.value_or(""), "/dev/null", "b/" + step.path);
        if (step.diff.empty()) step.diff = "--- /dev/null\n+++ b/" + step.path + "\n";
        plan_.files_created.push_back(step.path);
        break;
      case V4aOpKind::kDelete:
        step.diff = UnifiedDiff(step.before.value_or(""), "", "a/" + step.path, "/dev/null");
        if (step.diff.empty()) step.diff = "--- a/" + step.path + "\n+++ /dev/null\n";
        plan_.files_deleted.push_back(step.path);
        break;
      case V4aOpKind::kMove:
        step.diff = "# Moved: " + step.path + " -> " + step.new_path + "\n";
        plan_.files_modified.push_back(step.path + " -> " + step.new_path);
        break;
    }
    plan_.steps.push_back(std::move(step));
  }

  static bool Contains(const std::vector<std::string>& v, const std::string& s) {
    return std::find(v.begin(), v.end(), s) != v.end();
  }

  void PlanUpdate(const V4aOperation& op) {
    auto current = overlay_.Get(op.path);
    if (!current) {
      Problem(op.path + ": " + current.error().message());
      return;
    }
    if (!*current) {
      Problem(op.path + ": file not found (use '*** Add File:' to create it)");
      return;
    }
    const std::string before = **current;
    std::string content = before;
    bool failed = false;
    for (size_t i = 0; i < op.hunks.size(); ++i) {
      Result<HunkOutcome> outcome = ApplyHunk(content, op.hunks[i]);
      if (!outcome) {
        Problem(op.path + ": " + HunkLabel(i + 1, op.hunks[i]) + ": " + outcome.error().message());
        failed = true;
        continue;
      }
      if (outcome->already_applied) {
        ++already_applied_;
        plan_.notes.push_back(op.path + ": " + HunkLabel(i + 1, op.hunks[i]) +
                              " is already applied; skipped");
      }
      if (outcome->located || outcome->already_applied) {
        plan_.hunks.push_back(
            {op.path, i + 1, outcome->strategy, outcome->similarity, outcome->already_applied});
        Weigh(outcome->strategy, outcome->similarity);
      }
      content = std::move(outcome->content);
    }
    if (failed) return;
    overlay_.Set(op.path, content);
    if (content == before) return;
    V4aStep step;
    step.kind = V4aOpKind::kUpdate;
    step.path = op.path;
    step.before = before;
    step.after = std::move(content);
    AddStep(std::move(step));
  }

  void PlanAdd(const V4aOperation& op) {
    auto current = overlay_.Get(op.path);
    if (!current) {
      Problem(op.path + ": could not confirm the path is free: " + current.error().message());
      return;
    }
    if (*current) {
      Problem(op.path + ": file already exists; use '*** Update File:' to change it");
      return;
    }
    std::vector<std::string> lines;
    for (const V4aHunk& h : op.hunks) {
      for (const V4aHunkLine& l : h.lines) lines.push_back(l.text);
    }
    std::string content = Join(lines);
    if (!lines.empty()) content.push_back('\n');
    overlay_.Set(op.path, content);
    V4aStep step;
    step.kind = V4aOpKind::kAdd;
    step.path = op.path;
    step.after = std::move(content);
    AddStep(std::move(step));
  }

  void PlanDelete(const V4aOperation& op) {
    auto current = overlay_.Get(op.path);
    if (!current) {
      Problem(op.path + ": " + current.error().message());
      return;
    }
    if (!*current) {
      Problem(op.path + ": file not found for deletion");
      return;
    }
    V4aStep step;
    step.kind = V4aOpKind::kDelete;
    step.path = op.path;
    step.before = std::move(**current);
    overlay_.Set(op.path, std::nullopt);
    AddStep(std::move(step));
  }

  void PlanMove(const V4aOperation& op) {
    if (op.new_path.empty()) return;  // reported by the parser
    if (op.path == op.new_path) {
      Problem(op.path + ": Move File source and destination are the same path");
      return;
    }
    auto source = overlay_.Get(op.path);
    bool ok = true;
    if (!source) {
      Problem(op.path + ": " + source.error().message());
      ok = false;
    } else if (!*source) {
      Problem(op.path + ": source file not found for move");
      ok = false;
    }
    auto dest = overlay_.Get(op.new_path);
    if (!dest) {
      Problem(op.new_path +
              ": could not confirm the destination is free: " + dest.error().message());
      ok = false;
    } else if (*dest) {
      Problem(op.new_path + ": destination already exists; the move would overwrite it");
      ok = false;
    }
    if (!ok) return;
    V4aStep step;
    step.kind = V4aOpKind::kMove;
    step.path = op.path;
    step.new_path = op.new_path;
    step.before = **source;
    overlay_.Set(op.new_path, std::move(**source));
    overlay_.Set(op.path, std::nullopt);
    AddStep(std::move(step));
  }

  void Weigh(MatchStrategy strategy, double similarity) {
    if (similarity < plan_.similarity ||
        (similarity == plan_.similarity && strategy > plan_.strategy)) {
      plan_.similarity = similarity;
      plan_.strategy = strategy;
    }
  }

  Result<HunkOutcome> ApplyHunk(const std::string& content, const V4aHunk& hunk) {
    std::vector<std::string> search_lines, replace_lines;
    bool has_change = false;
    for (const V4aHunkLine& l : hunk.lines) {
      if (l.prefix != '+') search_lines.push_back(l.text);
      if (l.prefix != '-') replace_lines.push_back(l.text);
      has_change = has_change || l.prefix != ' ';
    }
    HunkOutcome out;
    out.content = content;
    // Context-only anchors (and -x/+x pairs) change nothing and cannot fail.
    if (!has_change || search_lines == replace_lines) return out;
    const std::string replace = Join(replace_lines);
    if (search_lines.empty()) return ApplyAddition(content, hunk, replace);
    const std::string search = Join(search_lines);

    MatchSet set = FindMatches(content, search);
    if (set.strategy != MatchStrategy::kExact || set.matches.empty()) {
      if (IsAlreadyApplied(content, search, replace)) {
        out.already_applied = true;
        return out;
      }
    }
    if (set.matches.empty()) {
      std::string message = "Could not find a match for the hunk's context and '-' lines";
      std::string closest = DescribeClosestRegions(content, search);
      if (!closest.empty()) message += "\nDid you mean one of these sections?\n" + closest;
      return Err(NotFoundError(std::move(message)));
    }
    std::vector<TextMatch> matches = set.matches;
    if (hunk.end_of_file) {
      std::erase_if(matches, [&](const TextMatch& m) {
        return content.find_first_not_of(" \t\r\n", m.end) != std::string::npos;
      });
      if (matches.empty()) {
        return Err(NotFoundError(
            "the hunk is marked '*** End of File' but its lines are not at the end of the file"));
      }
    }
    TextMatch chosen = matches.front();
    if (matches.size() > 1) {
      std::optional<TextMatch> picked = PickAfterHint(content, hunk, matches);
      if (!picked) {
        return Err(FailedPreconditionError(
            "the hunk matches " + std::to_string(matches.size()) + " places (via " +
            std::string(MatchStrategyName(set.strategy)) +
            "); add context lines or a unique '@@ hint @@' line before it. Matches:\n" +
            FormatMatchLocations(content, matches, set.strategy)));
      }
      chosen = *picked;
    }
    if (IsSimilarityStrategy(set.strategy) && chosen.similarity < kMinApplySimilarity) {
      return Err(FailedPreconditionError(DescribeRefusedCandidate(content, chosen, set.strategy)));
    }
    if (set.strategy != MatchStrategy::kExact) {
      TALARIA_RETURN_IF_ERROR(CheckEscapeDrift(content, {chosen}, search, replace));
    }
    std::string replacement =
        BuildReplacement(content, chosen, set.strategy, search, replace, &plan_.notes);
    out.content = content.substr(0, chosen.begin) + replacement + content.substr(chosen.end);
    out.strategy = set.strategy;
    out.similarity = chosen.similarity;
    out.changed = out.content != content;
    out.located = true;
    return out;
  }

  // With several matches, the hint picks: the first match starting on or after the line that
  // holds the hint, which must occur exactly once. Nothing is guessed otherwise.
  static std::optional<TextMatch> PickAfterHint(const std::string& content, const V4aHunk& hunk,
                                                const std::vector<TextMatch>& matches) {
    if (hunk.context_hint.empty() || CountOccurrences(content, hunk.context_hint) != 1) {
      return std::nullopt;
    }
    const size_t pos = content.find(hunk.context_hint);
    const size_t line_start = pos == 0 ? 0 : content.rfind('\n', pos - 1);
    const size_t from = line_start == std::string::npos || pos == 0 ? 0 : line_start + 1;
    for (const TextMatch& m : matches) {
      if (m.begin >= from) return m;
    }
    return std::nullopt;
  }

  // An addition-only hunk: after the line holding its unique hint, or at the end of the file.
  Result<HunkOutcome> ApplyAddition(const std::string& content, const V4aHunk& hunk,
                                    const std::string& text) {
    HunkOutcome out;
    out.content = content;
    out.located = true;
    const std::string insert = FitLineEndings(content, text + "\n");
    if (hunk.end_of_file && hunk.context_hint.empty()) {
      if (content.size() >= insert.size() &&
          content.compare(content.size() - insert.size(), insert.size(), insert) == 0 &&
          text.find_first_not_of(" \t") != std::string::npos && text.size() >= 8) {
        out.already_applied = true;
        out.located = false;
        return out;
      }
      std::string sep;
      if (!content.empty() && content.back() != '\n') sep = FitLineEndings(content, "\n");
      out.content = content + sep + insert;
      out.changed = true;
      return out;
    }
    if (hunk.context_hint.empty()) {
      return Err(FailedPreconditionError(
          "the hunk only adds lines and gives no place for them: add context lines, a unique "
          "'@@ hint @@' line, or '*** End of File'"));
    }
    const size_t n = CountOccurrences(content, hunk.context_hint);
    if (n == 0) {
      return Err(NotFoundError("the hunk only adds lines and its context hint '" +
                               hunk.context_hint + "' is not in the file"));
    }
    if (n > 1) {
      return Err(FailedPreconditionError("the hunk only adds lines and its context hint '" +
                                         hunk.context_hint + "' occurs " + std::to_string(n) +
                                         " times; give a hint that occurs once, or context lines"));
    }
    const size_t pos = content.find(hunk.context_hint);
    const size_t eol = content.find('\n', pos);
    if (eol == std::string::npos) {
      out.content = content + FitLineEndings(content, "\n") + insert;
    } else {
      if (content.compare(eol + 1, insert.size(), insert) == 0 && text.size() >= 8) {
        out.already_applied = true;
        out.located = false;
        return out;
      }
      out.content = content.substr(0, eol + 1) + insert + content.substr(eol + 1);
    }
    out.changed = true;
    return out;
  }

  Overlay overlay_;
  V4aPlan plan_;
  std::vector<std::string> problems_;
  size_t already_applied_ = 0;
};

}  // namespace

Result<std::vector<V4aOperation>> ParseV4aPatch(std::string_view patch) {
  return Parser().Parse(patch);
}

Result<V4aPlan> PlanV4aPatch(const std::vector<V4aOperation>& ops, const V4aReader& read) {
  return Planner(read).Plan(ops);
}

}  // namespace talaria::editing
