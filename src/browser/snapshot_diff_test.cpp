// DiffSnapshots on its own, then through the tools against real Chromium: an action on the
// same document answers with what changed (refs kept), a navigation or a change bigger than the
// page with the whole new snapshot, and an action that changes nothing says so.
#include "browser/snapshot_diff.h"

#include <gtest/gtest.h>
#include <stdlib.h>

#include <fstream>
#include <regex>
#include <string>

#include <nlohmann/json.hpp>

#include "browser/chromium_process.h"
#include "browser/snapshot_ref_test_util.h"
#include "support/loopback_http.h"
#include "support/registered_tool.h"
#include "support/temp_dir.h"
#include "talaria/browser/browser_sessions.h"
#include "talaria/core/registry.h"

namespace talaria::browser {
namespace {

TEST(SnapshotDiff, SameTextIsNoChange) {
  const std::string s = "- heading \"A\" [level=1] [ref=e1]\n- button \"Go\" [ref=e2]";
  SnapshotDiff d = DiffSnapshots(s, s);
  EXPECT_EQ(d.text, "");
  EXPECT_EQ(d.added + d.removed + d.changed, 0);
}

TEST(SnapshotDiff, NamesAddedRemovedAndChangedLinesWithTheirRefs) {
  const std::string before =
      "- heading \"Cart\" [level=1] [ref=e1]\n"
      "- list\n"
      "  - listitem\n"
      "    - button \"Remove apples\" [ref=e2]\n"
      "  - listitem\n"
      "    - button \"Remove pears\" [ref=e3]\n"
      "- textbox \"Note\" [ref=e4]\n"
      "- text: 2 items";
  const std::string after =
      "- heading \"Cart\" [level=1] [ref=e1]\n"
      "- list\n"
      "  - listitem\n"
      "    - button \"Remove pears\" [ref=e3]\n"
      "  - listitem\n"
      "    - button \"Remove plums\" [ref=e5]\n"
      "- textbox \"Note\" [focused] [ref=e4]: gift\n"
      "- text: 2 items";
  SnapshotDiff d = DiffSnapshots(before, after);
  EXPECT_EQ(d.text,
            "+ - button \"Remove plums\" [ref=e5]\n"
            "~ - textbox \"Note\" [focused] [ref=e4]: gift\n"
            "- - button \"Remove apples\" [ref=e2]")
      << d.text;
  EXPECT_EQ(d.added, 1);
  EXPECT_EQ(d.removed, 1);
  EXPECT_EQ(d.changed, 1);
}

TEST(SnapshotDiff, PlacesRefLessLinesAfterTheNearestRef) {
  SnapshotDiff d = DiffSnapshots("- button \"Save\" [ref=e1]\n- text: draft",
                                 "- button \"Save\" [ref=e1]\n- text: saved");
  EXPECT_EQ(d.text, "+ - text: saved  (after @e1)\n- - text: draft  (after @e1)") << d.text;
}

TEST(SnapshotDiff, PageTextThatLooksLikeARefIsNotOne) {
  // A text line and a field's value can hold "[ref=e1]": only the line's own tag counts.
  SnapshotDiff d = DiffSnapshots("- button \"a [ref=e9]\" [ref=e1]\n- textbox \"q\" [ref=e2]: x",
                                 "- text: [ref=e1]\n- button \"a [ref=e9]\" [ref=e1]\n"
                                 "- textbox \"q\" [ref=e2]: [ref=e1]");
  EXPECT_EQ(d.text, "+ - text: [ref=e1]\n~ - textbox \"q\" [ref=e2]: [ref=e1]") << d.text;
}

std::function<void(httplib::Server&)> DiffRoutes() {
  return [](httplib::Server& s) {
    s.Get("/list", [](const httplib::Request&, httplib::Response& res) {
      std::string big;
      for (int i = 0; i < 40; ++i)
        big += "<a href=#n" + std::to_string(i) + ">New " + std::to_string(i) + "</a>";
      res.set_content(
          "<!doctype html><title>List</title><h1>List</h1><ul id=l><li><button>Old item</button>"
          "<li><button>Kept item</button></ul><input aria-label=Note>"
          "<button onclick=\"const l=document.getElementById('l');l.firstElementChild.remove();"
          "const li=document.createElement('li');li.innerHTML='<button>Fresh item</button>';"
          "l.appendChild(li)\">Swap</button>"
          "<button onclick=\"document.body.innerHTML='" +
              big +
              "'\">Replace all</button>"
              "<a href=/other>Elsewhere</a>",
          "text/html");
    });
    s.Get("/other", [](const httplib::Request&, httplib::Response& res) {
      res.set_content("<!doctype html><title>Other</title><h1>Other page</h1>", "text/html");
    });
  };
}

class SnapshotDiffToolsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    if (FindChromium().empty()) GTEST_SKIP() << "no Chromium installed (apt-get install chromium)";
    ::setenv("TALARIA_HOME", home_.path().c_str(), 1);
    std::ofstream(home_.path() + "/config.yaml")
        << "browser:\n  allow_private: [\"127.0.0.1:" << server_.port() << "\"]\n";
  }
  void TearDown() override { CloseAllBrowserSessions(); }

  Json Use(const std::string& tool, const Json& args) {
    ToolContext ctx;
    ctx.task_id = "diff-test";
    ToolResult r;
    Json j = talaria::test_support::CallRegisteredTool(tool, args, ctx, &r);
    EXPECT_TRUE(r.ok()) << r.text;
    return j;
  }
  talaria::test_support::TempDir home_;
  talaria_test::LoopbackHttpServer server_{DiffRoutes()};
};

TEST_F(SnapshotDiffToolsTest, AnActionOnTheSamePageAnswersWithWhatChanged) {
  Json nav = Use("browser_navigate", {{"url", server_.url("/list")}});
  const std::string page = nav.value("snapshot", "");
  const std::string old_item = test_util::SnapshotToolRefOf(page, "\"Old item\"");
  const std::string kept = test_util::SnapshotToolRefOf(page, "\"Kept item\"");
  ASSERT_FALSE(old_item.empty()) << page;

  Json swapped = Use("browser_click", {{"ref", test_util::SnapshotToolRefOf(page, "\"Swap\"")}});
  EXPECT_FALSE(swapped.contains("snapshot")) << swapped.dump();
  const std::string diff = swapped.value("snapshot_diff", "");
  EXPECT_NE(diff.find("- - button \"Old item\" [ref=" + old_item.substr(1) + "]"),
            std::string::npos)
      << diff;
  EXPECT_NE(diff.find("+ - button \"Fresh item\" [ref="), std::string::npos) << diff;
  EXPECT_EQ(diff.find("Kept item"), std::string::npos) << "unchanged lines are left out: " << diff;
  EXPECT_GT(swapped.value("element_count", 0), 0);

  // The new element's ref works as any other.
  const std::string fresh = test_util::SnapshotToolRefOf(diff, "\"Fresh item\"");
  ASSERT_FALSE(fresh.empty()) << diff;
  Json typed = Use("browser_type", {{"ref", test_util::SnapshotToolRefOf(page, "textbox \"Note\"")},
                                    {"text", "gift"}});
  EXPECT_NE(typed.value("snapshot_diff", "").find("~ - textbox \"Note\""), std::string::npos)
      << typed.dump();
  EXPECT_NE(typed.value("snapshot_diff", "").find(": gift"), std::string::npos) << typed.dump();

  Json idle = Use("browser_click", {{"ref", kept}});
  // Focus moves to the clicked button (a changed line), nothing else happens.
  EXPECT_EQ(idle.value("snapshot_diff", "x").find("Old item"), std::string::npos) << idle.dump();
  Json again = Use("browser_click", {{"ref", kept}});
  EXPECT_EQ(again.value("unchanged", false), true) << again.dump();
  EXPECT_EQ(again.value("snapshot_diff", "x"), "") << again.dump();
}

TEST_F(SnapshotDiffToolsTest, ANavigationOrABigChangeAnswersWithTheWholePage) {
  Json nav = Use("browser_navigate", {{"url", server_.url("/list")}});
  const std::string page = nav.value("snapshot", "");
  Json replaced =
      Use("browser_click", {{"ref", test_util::SnapshotToolRefOf(page, "\"Replace all\"")}});
  EXPECT_FALSE(replaced.contains("snapshot_diff")) << replaced.dump();
  EXPECT_NE(replaced.value("snapshot", "").find("link \"New 39\""), std::string::npos)
      << replaced.dump();

  nav = Use("browser_navigate", {{"url", server_.url("/list")}});
  Json moved = Use("browser_click",
                   {{"ref", test_util::SnapshotToolRefOf(nav.value("snapshot", ""), "Elsewhere")}});
  EXPECT_FALSE(moved.contains("snapshot_diff")) << moved.dump();
  EXPECT_NE(moved.value("snapshot", "").find("heading \"Other page\""), std::string::npos)
      << moved.dump();
  EXPECT_EQ(moved.value("title", ""), "Other");
}

}  // namespace
}  // namespace talaria::browser
