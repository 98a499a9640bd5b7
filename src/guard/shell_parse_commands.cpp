// Simple commands and what attaches to them: creating the SimpleCommand entries,
// NAME=value and NAME=( ... ) assignments, redirections (also those after a compound
// command), and heredoc bodies, which are read at the next newline.
#include "guard/shell_parser_internal.h"

#include <iterator>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace talaria::safety::shell_internal {

int Parser::NewCommand() {
  SimpleCommand c;
  c.parent = parent_;
  c.origin = origin_;
  c.pipeline = cur_pipeline_;
  c.pipe_pos = cur_pos_;
  c.stdin_piped = cur_pos_ > 0 || inherit_piped_;
  c.function = function_;
  sh_.out->commands.push_back(std::move(c));
  return static_cast<int>(sh_.out->commands.size() - 1);
}

bool Parser::ParseTrailingRedirections(int idx, size_t begin) {
  while (true) {
    SkipBlanks();
    if (!IsRedirectionStart()) break;
    if (idx < 0) idx = NewCommand();
    if (!ParseRedirection(idx)) return false;
  }
  if (idx >= 0 && Cmd(idx).segment.empty()) {
    Cmd(idx).segment = std::string(src_.substr(begin, pos_ - begin));
  }
  return true;
}

bool Parser::IsRedirectionStart() const {
  size_t i = pos_;
  while (i < src_.size() && IsDigit(src_[i]) && i - pos_ < 4) ++i;
  if (i >= src_.size()) return false;
  const char c = src_[i];
  if (c == '&') return i == pos_ && i + 1 < src_.size() && src_[i + 1] == '>';
  if (c != '<' && c != '>') return false;
  if (i == pos_ && i + 1 < src_.size() && src_[i + 1] == '(') return false;  // <( >(
  return true;
}

bool Parser::ParseRedirection(int idx) {
  Redirection r;
  if (IsDigit(Peek())) {
    int fd = 0;
    while (IsDigit(Peek())) {
      fd = fd * 10 + (Peek() - '0');
      ++pos_;
    }
    r.fd = fd;
  }
  const std::string_view rest = src_.substr(pos_);
  bool strip_tabs = false;
  if (rest.starts_with("&>>")) {
    r.op = RedirectOp::kAppendOutErr;
    pos_ += 3;
  } else if (rest.starts_with("&>")) {
    r.op = RedirectOp::kOutErr;
    pos_ += 2;
  } else if (rest.starts_with("<<<")) {
    r.op = RedirectOp::kHereString;
    pos_ += 3;
  } else if (rest.starts_with("<<-")) {
    r.op = RedirectOp::kHeredoc;
    strip_tabs = true;
    pos_ += 3;
  } else if (rest.starts_with("<<")) {
    r.op = RedirectOp::kHeredoc;
    pos_ += 2;
  } else if (rest.starts_with("<>")) {
    r.op = RedirectOp::kInOut;
    pos_ += 2;
  } else if (rest.starts_with("<&")) {
    r.op = RedirectOp::kDupIn;
    pos_ += 2;
  } else if (rest.starts_with("<")) {
    r.op = RedirectOp::kIn;
    pos_ += 1;
  } else if (rest.starts_with(">>")) {
    r.op = RedirectOp::kAppend;
    pos_ += 2;
  } else if (rest.starts_with(">|")) {
    r.op = RedirectOp::kClobber;
    pos_ += 2;
  } else if (rest.starts_with(">&")) {
    r.op = RedirectOp::kDupOut;
    pos_ += 2;
  } else {
    r.op = RedirectOp::kOut;
    pos_ += 1;
  }
  SkipBlanks();
  const bool proc_subst = (PeekIs(0, '<') || PeekIs(0, '>')) && PeekIs(1, '(');
  if (AtEnd() || (IsMeta(Peek()) && !proc_subst)) return Syntax("missing redirection target");
  std::vector<ShellWord> target;
  if (!LexWord(idx, target)) return false;
  if (!target.empty()) r.target = std::move(target.front());
  Cmd(idx).redirections.push_back(std::move(r));
  if (Cmd(idx).redirections.back().op == RedirectOp::kHeredoc) {
    const ShellWord& t = Cmd(idx).redirections.back().target;
    heredocs_.push_back(PendingHeredoc{idx, Cmd(idx).redirections.size() - 1, t.text, strip_tabs,
                                       !t.Has(kWordQuoted)});
  }
  return true;
}

bool Parser::ParseSimple() {
  const int idx = NewCommand();
  const size_t begin = pos_;
  size_t end = pos_;
  bool has_command_word = false;
  while (true) {
    SkipBlanks();
    if (AtEnd()) break;
    const char c = Peek();
    if (IsRedirectionStart()) {
      if (!ParseRedirection(idx)) return false;
      end = pos_;
      continue;
    }
    const bool proc_subst = (c == '<' || c == '>') && PeekIs(1, '(');
    if (c == '(') {
      SimpleCommand& cmd = Cmd(idx);
      if (cmd.argv.size() == 1 && cmd.assignments.empty() && cmd.redirections.empty() &&
          cmd.argv[0].IsLiteral()) {
        ++pos_;
        SkipBlanks();
        if (!PeekIs(0, ')')) return Syntax("expected ')' in function definition");
        ++pos_;
        std::string name = std::move(cmd.argv[0].text);
        cmd.argv.clear();
        cmd.segment = std::string(src_.substr(begin, pos_ - begin));
        return ParseFunctionBody(name);
      }
      return Syntax("unexpected '('");
    }
    if (IsMeta(c) && !proc_subst) break;
    std::vector<ShellWord> words;
    const bool assignment = !has_command_word && LooksLikeAssignment();
    if (!LexWord(idx, words)) return false;
    if (assignment) {
      ShellWord w = words.empty() ? ShellWord{} : std::move(words.front());
      if (!w.text.empty() && w.text.back() == '=' && PeekIs(0, '(')) {
        if (!LexArrayValue(idx, w)) return false;
      }
      Cmd(idx).assignments.push_back(std::move(w));
    } else {
      auto& argv = Cmd(idx).argv;
      argv.insert(argv.end(), std::make_move_iterator(words.begin()),
                  std::make_move_iterator(words.end()));
      has_command_word = !Cmd(idx).argv.empty();
    }
    end = pos_;
  }
  Cmd(idx).segment = std::string(src_.substr(begin, end - begin));
  return true;
}

bool Parser::LooksLikeAssignment() const {
  size_t i = pos_;
  if (i >= src_.size() || !IsNameStart(src_[i])) return false;
  while (i < src_.size() && IsNameChar(src_[i])) ++i;
  if (i < src_.size() && src_[i] == '[') {
    while (i < src_.size() && src_[i] != ']' && !IsMeta(src_[i])) ++i;
    if (i >= src_.size() || src_[i] != ']') return false;
    ++i;
  }
  if (i < src_.size() && src_[i] == '+') ++i;
  return i < src_.size() && src_[i] == '=';
}

bool Parser::LexArrayValue(int idx, ShellWord& w) {
  ++pos_;
  w.text += '(';
  bool first = true;
  while (true) {
    SkipLinebreaks();
    if (AtEnd()) return Syntax("unterminated array assignment");
    if (PeekIs(0, ')')) {
      ++pos_;
      break;
    }
    if (IsMeta(Peek())) return Syntax("bad array element");
    std::vector<ShellWord> elems;
    if (!LexWord(idx, elems)) return false;
    for (auto& e : elems) {
      if (!first) w.text += ' ';
      first = false;
      w.text += e.text;
      w.flags |= e.flags;
    }
  }
  w.text += ')';
  return true;
}

void Parser::ReadHeredocs() {
  std::vector<PendingHeredoc> pending = std::move(heredocs_);
  heredocs_.clear();
  for (const PendingHeredoc& h : pending) {
    std::string body;
    while (pos_ < src_.size()) {
      size_t eol = src_.find('\n', pos_);
      const size_t line_end = eol == std::string_view::npos ? src_.size() : eol;
      std::string_view line = src_.substr(pos_, line_end - pos_);
      pos_ = eol == std::string_view::npos ? src_.size() : eol + 1;
      if (h.strip_tabs) {
        while (!line.empty() && line.front() == '\t') line.remove_prefix(1);
      }
      if (line == h.delim) break;
      body.append(line);
      body += '\n';
    }
    if (h.expands && sh_.error.ok()) {
      // Errors in a heredoc body's substitutions surface through sh_.error.
      (void)ScanEmbedded(h.cmd, body);
    }
    Redirection& r = Cmd(h.cmd).redirections[h.redir];
    r.heredoc_body = std::move(body);
    r.heredoc_expands = h.expands;
  }
}

}  // namespace talaria::safety::shell_internal
