#include "talaria/guard/shell_parser.h"

#include <gtest/gtest.h>

#include <cstdint>
#include <string>
#include <vector>

namespace talaria::safety {
namespace {

ParsedScript MustParse(std::string_view text) {
  auto r = ParseShell(text);
  EXPECT_TRUE(r.has_value()) << text << ": " << (r ? "" : r.error().ToString());
  return r ? std::move(*r) : ParsedScript{};
}

std::vector<std::string> Argv(const SimpleCommand& c) {
  std::vector<std::string> out;
  for (const auto& w : c.argv) out.push_back(w.text);
  return out;
}

// argv of every command with a non-empty argv, in order.
std::vector<std::vector<std::string>> AllArgv(std::string_view text) {
  std::vector<std::vector<std::string>> out;
  for (const auto& c : MustParse(text).commands) {
    if (!c.argv.empty()) out.push_back(Argv(c));
  }
  return out;
}

using V = std::vector<std::string>;
using VV = std::vector<V>;

TEST(ShellParser, SplitsWordsAndRemovesQuotes) {
  EXPECT_EQ(AllArgv("ls -la  /tmp"), (VV{{"ls", "-la", "/tmp"}}));
  EXPECT_EQ(AllArgv("echo 'a b' \"c d\" e\\ f"), (VV{{"echo", "a b", "c d", "e f"}}));
  EXPECT_EQ(AllArgv("r\\m 'r'm \"r\"m r''m"), (VV{{"rm", "rm", "rm", "rm"}}));
  EXPECT_EQ(AllArgv("echo $'a\\tb\\x41\\101\\u00e9'"), (VV{{"echo", "a\tbAA\xc3\xa9"}}));
  EXPECT_EQ(AllArgv("echo \"a\\\"b\\$c\\d\""), (VV{{"echo", "a\"b$c\\d"}}));
  EXPECT_EQ(AllArgv("echo a\\\nb"), (VV{{"echo", "ab"}}));
}

TEST(ShellParser, FlagsQuotingExpansionsAndGlobs) {
  auto s = MustParse("echo 'q' $HOME \"$(date)\" *.txt ~/x plain [ ]");
  const auto& w = s.commands[0].argv;
  ASSERT_EQ(w.size(), 9u);
  EXPECT_TRUE(w[1].Has(kWordQuoted));
  EXPECT_TRUE(w[2].Has(kWordExpansion));
  EXPECT_TRUE(w[3].Has(kWordCommandSubst) && w[3].Has(kWordQuoted));
  EXPECT_TRUE(w[4].Has(kWordGlob));
  EXPECT_TRUE(w[5].Has(kWordTilde));
  EXPECT_TRUE(w[6].IsLiteral());
  EXPECT_FALSE(w[7].Has(kWordGlob));
  EXPECT_TRUE(MustParse("echo '*'").commands[0].argv[1].IsLiteral());
}

TEST(ShellParser, SplitsOnOperators) {
  EXPECT_EQ(AllArgv("a; b && c || d | e |& f & g\nh"),
            (VV{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}, {"f"}, {"g"}, {"h"}}));
  auto s = MustParse("a | b | c; d & e");
  ASSERT_EQ(s.commands.size(), 5u);
  EXPECT_TRUE(s.commands[1].in_pipeline);
  EXPECT_EQ(s.commands[2].pipe_pos, 2);
  EXPECT_TRUE(s.commands[2].stdin_piped);
  EXPECT_FALSE(s.commands[0].stdin_piped);
  EXPECT_FALSE(s.commands[3].in_pipeline);
  EXPECT_TRUE(s.commands[3].background);
  EXPECT_FALSE(s.commands[4].background);
}

TEST(ShellParser, SubshellsGroupsAndControlStructures) {
  EXPECT_EQ(AllArgv("(a; b) && { c; d; }"), (VV{{"a"}, {"b"}, {"c"}, {"d"}}));
  EXPECT_EQ(AllArgv("if a; then b; elif c; then d; else e; fi"),
            (VV{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}));
  EXPECT_EQ(AllArgv("while a; do b; done; until c; do d; done"), (VV{{"a"}, {"b"}, {"c"}, {"d"}}));
  EXPECT_EQ(AllArgv("for x in 1 2; do echo $x; done"),
            (VV{{"for", "x", "in", "1", "2"}, {"echo", "$x"}}));
  EXPECT_EQ(AllArgv("for ((i=0;i<3;i++)); do a; done"), (VV{{"for", "i=0;i<3;i++"}, {"a"}}));
  EXPECT_EQ(AllArgv("case $x in a|b) one;; (c) two;& *) three;; esac"),
            (VV{{"case", "$x", "a", "b", "c", "*"}, {"one"}, {"two"}, {"three"}}));
  EXPECT_EQ(AllArgv("[[ $a == b && -f x ]] && c"),
            (VV{{"[[", "$a", "==", "b", "&", "&", "-f", "x", "]]"}, {"c"}}));
  EXPECT_EQ(AllArgv("! a | b"), (VV{{"a"}, {"b"}}));
  EXPECT_EQ(AllArgv("time -p a"), (VV{{"a"}}));
  EXPECT_EQ(AllArgv("echo done fi then }"), (VV{{"echo", "done", "fi", "then", "}"}}));
  EXPECT_EQ(AllArgv("(( x = 1 + 2 ))"), (VV{{"((", " x = 1 + 2 "}}));
}

TEST(ShellParser, CompoundInPipelinePassesPipedStdin) {
  auto s = MustParse("curl x | { read a; bash; }");
  ASSERT_EQ(s.commands.size(), 3u);
  EXPECT_TRUE(s.commands[1].stdin_piped);
  EXPECT_TRUE(s.commands[2].stdin_piped);
}

TEST(ShellParser, FunctionDefinitions) {
  auto s = MustParse("f() { a | f & }; function g { b; }; h() ( c )");
  std::vector<std::string> fns;
  for (const auto& c : s.commands) {
    if (!c.argv.empty()) fns.push_back(c.argv[0].text + "@" + c.function);
  }
  EXPECT_EQ(fns, (V{"a@f", "f@f", "b@g", "c@h"}));
  auto bomb = MustParse(":(){ :|:& };:");
  bool found = false;
  for (const auto& c : bomb.commands) {
    if (c.function == ":" && !c.argv.empty() && c.in_pipeline && c.background) found = true;
  }
  EXPECT_TRUE(found);
}

TEST(ShellParser, SubstitutionsAreParsedRecursively) {
  auto s = MustParse("echo $(a $(b) `c`) <(d) >(e) \"$(f)\" ${x:-$(g)} $((1 + $(h)))");
  std::vector<std::string> names;
  for (const auto& c : s.commands) {
    if (!c.argv.empty()) names.push_back(c.argv[0].text);
  }
  EXPECT_EQ(names, (V{"echo", "a", "b", "c", "d", "e", "f", "g", "h"}));
  for (size_t i = 1; i < s.commands.size(); ++i) EXPECT_GE(s.commands[i].parent, 0);
  EXPECT_EQ(s.commands[1].origin, CommandOrigin::kCommandSubst);
  EXPECT_EQ(s.commands[4].origin, CommandOrigin::kProcessSubst);
  EXPECT_EQ(AllArgv("echo `echo \\`inner\\``"),
            (VV{{"echo", "`echo \\`inner\\``"}, {"echo", "`inner`"}, {"inner"}}));
  EXPECT_EQ(AllArgv("$( (a) )"), (VV{{"$( (a) )"}, {"a"}}));
  EXPECT_EQ(AllArgv("x=$(case y in y) a;; esac)"), (VV{{"case", "y", "y"}, {"a"}}));
}

TEST(ShellParser, Redirections) {
  auto s = MustParse("cmd <in >out 2>>err 3<>rw >|clob >&2 2>&1 &>all &>>app <&- 9>f");
  const auto& r = s.commands[0].redirections;
  ASSERT_EQ(r.size(), 11u);
  EXPECT_EQ(r[0].op, RedirectOp::kIn);
  EXPECT_EQ(r[1].op, RedirectOp::kOut);
  EXPECT_EQ(r[1].target.text, "out");
  EXPECT_EQ(r[2].op, RedirectOp::kAppend);
  EXPECT_EQ(r[2].fd, 2);
  EXPECT_EQ(r[3].op, RedirectOp::kInOut);
  EXPECT_EQ(r[4].op, RedirectOp::kClobber);
  EXPECT_EQ(r[5].op, RedirectOp::kDupOut);
  EXPECT_TRUE(r[5].IsFdTarget());
  EXPECT_FALSE(r[5].Writes());
  EXPECT_EQ(r[7].op, RedirectOp::kOutErr);
  EXPECT_EQ(r[8].op, RedirectOp::kAppendOutErr);
  EXPECT_TRUE(r[9].IsFdTarget());
  EXPECT_EQ(r[10].fd, 9);
  EXPECT_EQ(Argv(s.commands[0]), (V{"cmd"}));
  auto g = MustParse("{ a; } > /dev/sda");
  ASSERT_EQ(g.commands.size(), 2u);
  EXPECT_TRUE(g.commands[1].argv.empty());
  EXPECT_EQ(g.commands[1].redirections[0].target.text, "/dev/sda");
}

TEST(ShellParser, HeredocsAndHereStrings) {
  auto s =
      MustParse("cat <<EOF > out\nline $(x)\nEOF\nbash <<-'END'\n\trm -rf /\n\tEND\ny <<< 'z w'");
  ASSERT_GE(s.commands.size(), 4u);
  EXPECT_EQ(s.commands[0].redirections[0].heredoc_body, "line $(x)\n");
  EXPECT_TRUE(s.commands[0].redirections[0].heredoc_expands);
  EXPECT_EQ(Argv(s.commands[1]), (V{"x"}));  // $(x) in an unquoted heredoc runs
  EXPECT_EQ(s.commands[1].parent, 0);
  EXPECT_EQ(Argv(s.commands[2]), (V{"bash"}));
  EXPECT_EQ(s.commands[2].redirections[0].heredoc_body, "rm -rf /\n");
  EXPECT_FALSE(s.commands[2].redirections[0].heredoc_expands);
  EXPECT_EQ(s.commands[3].redirections[0].op, RedirectOp::kHereString);
  EXPECT_EQ(s.commands[3].redirections[0].target.text, "z w");
}

TEST(ShellParser, AssignmentsAndArrays) {
  auto s = MustParse("A=1 B=\"x y\" C=(a $(b) c) cmd D=2");
  EXPECT_EQ(s.commands[0].assignments.size(), 3u);
  EXPECT_EQ(s.commands[0].assignments[2].text, "C=(a $(b) c)");
  EXPECT_EQ(Argv(s.commands[0]), (V{"cmd", "D=2"}));
  EXPECT_EQ(Argv(s.commands[1]), (V{"b"}));
}

TEST(ShellParser, BraceExpansionAndIfs) {
  EXPECT_EQ(AllArgv("{rm,-rf,/}"), (VV{{"rm", "-rf", "/"}}));
  EXPECT_EQ(AllArgv("find . -{delete,print}"), (VV{{"find", ".", "-delete", "-print"}}));
  EXPECT_EQ(AllArgv("echo a{b,c{d,e}}f"), (VV{{"echo", "abf", "acdf", "acef"}}));
  EXPECT_EQ(AllArgv("echo {} {a} '{x,y}'"), (VV{{"echo", "{}", "{a}", "{x,y}"}}));
  EXPECT_EQ(AllArgv("rm${IFS}-rf$IFS/"), (VV{{"rm", "-rf", "/"}}));
  EXPECT_EQ(AllArgv("echo \"$IFS\""), (VV{{"echo", "$IFS"}}));
}

TEST(ShellParser, CommentsAreIgnored) {
  EXPECT_EQ(AllArgv("a # rm -rf /\nb#c"), (VV{{"a"}, {"b#c"}}));
}

TEST(ShellParser, MalformedInputIsInvalidArgument) {
  for (const char* bad :
       {"echo 'abc", "echo \"abc", "echo $(ls", "(a; b", "a)", "{ a; ", "if a; then b", "echo `x",
        "case x in a) b", "| a", "a &&", "a | | b", "echo ${x", "for x in a; b; done", "fi",
        "a; ;; b", "cat <", "while a; do b"}) {
    auto r = ParseShell(bad);
    ASSERT_FALSE(r.has_value()) << bad;
    EXPECT_EQ(r.error().code(), StatusCode::kInvalidArgument)
        << bad << ": " << r.error().ToString();
  }
}

TEST(ShellParser, LimitsFailAsResourceExhausted) {
  auto code = [](const std::string& s) {
    auto r = ParseShell(s);
    return r ? StatusCode::kOk : r.error().code();
  };
  EXPECT_EQ(code(std::string(128001, ' ')), StatusCode::kResourceExhausted);
  EXPECT_EQ(code("echo " + std::string(4097, 'a')), StatusCode::kResourceExhausted);
  EXPECT_EQ(code("echo " + std::string(4096, 'a')), StatusCode::kOk);
  std::string seps;
  for (int i = 0; i < 25000; ++i) seps += "a;";
  EXPECT_EQ(code(seps), StatusCode::kResourceExhausted);
  std::string parens;
  for (int i = 0; i < 200; ++i) parens += "( ";
  parens += "a";
  for (int i = 0; i < 200; ++i) parens += " )";
  EXPECT_EQ(code(parens), StatusCode::kResourceExhausted);
  std::string nested = "a";
  for (int i = 0; i < 100; ++i) nested = "$(" + nested + ")";
  EXPECT_EQ(code(nested), StatusCode::kResourceExhausted);
  std::string ticks = "echo \"${a:-";
  for (int i = 0; i < 100; ++i) ticks += "${a:-";
  EXPECT_EQ(code(ticks), StatusCode::kResourceExhausted);
  EXPECT_EQ(
      code("echo {a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}{a,b}"),
      StatusCode::kResourceExhausted);
  std::string fns;
  for (int i = 0; i < 200; ++i) fns += "f" + std::to_string(i) + "() ";
  EXPECT_NE(code(fns + "{ a; }"), StatusCode::kOk);
}

TEST(ShellParser, SurvivesRandomBytes) {
  uint64_t state = 0x1234567;
  auto next = [&] {
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return static_cast<uint32_t>(state >> 33);
  };
  const std::string alphabet = "ab $'\"`\\(){}[];&|<>\n\t#=*?~!-0123456789EOF";
  for (int i = 0; i < 4000; ++i) {
    std::string s;
    const size_t len = next() % 80;
    for (size_t k = 0; k < len; ++k) {
      s += (i % 2 == 0) ? alphabet[next() % alphabet.size()] : static_cast<char>(next() & 0xff);
    }
    auto r = ParseShell(s);  // must return, not crash
    if (!r) {
      EXPECT_TRUE(r.error().code() == StatusCode::kInvalidArgument ||
                  r.error().code() == StatusCode::kResourceExhausted)
          << r.error().ToString();
    }
  }
}

}  // namespace
}  // namespace talaria::safety
