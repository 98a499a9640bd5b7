// A local Camofox (hermes-wave2.md e.3; camofox-browser's REST API) on 127.0.0.1 (port 0) with
// a tiny built-in web instead of a browser:
//   https://example.org/        "[heading] Example Domain", a link e1 to /more, a textbox e2,
//                               a button e3 (a click shows "Submitted: <typed text>")
//   https://example.org/more    a heading and a link e1 back to /
//   https://example.org/long    200,000 characters of paragraphs (paginated at 80,000)
//   https://example.org/hop     lands on http://169.254.169.254/latest/meta-data/ (a redirect
//                               to the metadata address)
// It checks userId on every call (a tab answers only to the user that made it), the fields of
// each action, and Bearer auth on evaluate when an API key is set. Evaluate knows two
// expressions: "document.title" and the images collector (anything containing
// "document.images"). Thread-safe.
#pragma once

#include <memory>
#include <string>
#include <vector>

namespace talaria_test {

class LoopbackHttpServer;

class FakeCamofox {
 public:
  explicit FakeCamofox(std::string api_key = "");
  ~FakeCamofox();
  FakeCamofox(const FakeCamofox&) = delete;
  FakeCamofox& operator=(const FakeCamofox&) = delete;

  std::string url() const;
  // "METHOD /path" of every request, in order.
  std::vector<std::string> calls() const;
  std::vector<std::string> navigations() const;  // URLs asked for, in order
  int live_sessions() const;                     // users with tabs, not deleted

  struct State;

 private:
  std::shared_ptr<State> state_;
  std::unique_ptr<LoopbackHttpServer> server_;
};

}  // namespace talaria_test
