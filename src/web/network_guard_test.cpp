// The network guard's syntax and address rules, one test (at least) per class of trick.
#include "talaria/web/network_guard.h"

#include <gtest/gtest.h>

#include <string>
#include <vector>

namespace talaria::web {
namespace {

std::shared_ptr<const NetworkGuard> Guard(std::vector<std::string> allow = {}) {
  auto g = NetworkGuard::Create({.allow_private = std::move(allow), .resolver = nullptr});
  EXPECT_TRUE(g.has_value()) << g.error().message();
  return *g;
}

// The rule a URL is refused by without resolution ("" when admitted by Check).
std::string RuleOf(std::string_view url, std::vector<std::string> allow = {}) {
  auto r = Guard(std::move(allow))->Check(url);
  if (r.has_value()) return "";
  const std::string rule = RefusalRule(r.error());
  return rule.empty() ? "error: " + r.error().message() : rule;
}

TEST(IpLiteral, ReadsEveryIpv4Spelling) {
  for (const char* s :
       {"127.0.0.1", "2130706433", "0x7f000001", "0x7F.0.0.1", "0177.0.0.1", "0177.0.0.01", "127.1",
        "127.0.1", "0x7f.1", "127.0.0.1.", "017700000001"}) {
    auto a = ParseIpLiteral(s);
    ASSERT_TRUE(a.has_value()) << s;
    EXPECT_EQ(a->ToString(), "127.0.0.1") << s;
  }
  EXPECT_FALSE(ParseIpLiteral("256.0.0.1").has_value());
  EXPECT_FALSE(ParseIpLiteral("1.2.3.4.5").has_value());
  EXPECT_FALSE(ParseIpLiteral("example.com").has_value());
  EXPECT_FALSE(ParseIpLiteral("08.0.0.1").has_value());  // 8 is no octal digit
}

TEST(IpLiteral, ReadsIpv6WithBracketsAndZones) {
  EXPECT_EQ(ParseIpLiteral("[::1]")->ToString(), "::1");
  EXPECT_EQ(ParseIpLiteral("fe80::1%25eth0")->ToString(), "fe80::1");
  EXPECT_EQ(ParseIpLiteral("[::ffff:127.0.0.1]")->ToString(), "::ffff:127.0.0.1");
}

TEST(AddressRules, NameEveryRange) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"0.0.0.0", "unspecified"},
      {"127.0.0.1", "loopback"},
      {"10.1.2.3", "private"},
      {"172.16.0.1", "private"},
      {"192.168.1.1", "private"},
      {"169.254.1.1", "link-local"},
      {"100.64.0.1", "cgnat"},
      {"198.18.0.1", "benchmark"},
      {"224.0.0.1", "multicast"},
      {"240.0.0.1", "reserved"},
      {"255.255.255.255", "reserved"},
      {"192.0.2.1", "reserved"},
      {"169.254.169.254", "cloud-metadata"},
      {"100.100.100.200", "cloud-metadata"},
      {"::", "unspecified"},
      {"::1", "loopback"},
      {"fe80::1", "link-local"},
      {"fc00::1", "private"},
      {"fd12::1", "private"},
      {"ff02::1", "multicast"},
      {"2001:db8::1", "reserved"},
      {"fd00:ec2::254", "cloud-metadata"},
      {"100::1", "reserved"},
  };
  for (const auto& [text, rule] : cases) {
    auto a = ParseIpLiteral(text);
    ASSERT_TRUE(a.has_value()) << text;
    auto got = BlockedRule(*a);
    ASSERT_TRUE(got.has_value()) << text;
    EXPECT_EQ(*got, rule) << text;
  }
  for (const char* pub : {"93.184.216.34", "8.8.8.8", "2606:4700::1111", "1.1.1.1"}) {
    EXPECT_FALSE(BlockedRule(*ParseIpLiteral(pub)).has_value()) << pub;
  }
}

TEST(AddressRules, JudgeTransitionFormsByTheIpv4Inside) {
  const std::vector<std::pair<const char*, const char*>> cases = {
      {"::ffff:127.0.0.1", "loopback"},                      // IPv4-mapped
      {"::ffff:7f00:1", "loopback"},                         // the same, in hex
      {"::127.0.0.1", "loopback"},                           // IPv4-compatible
      {"::ffff:0:10.0.0.1", "private"},                      // IPv4-translated
      {"64:ff9b::7f00:1", "loopback"},                       // NAT64
      {"64:ff9b::a9fe:a9fe", "cloud-metadata"},              // NAT64 of 169.254.169.254
      {"64:ff9b:1::1", "private"},                           // local-use NAT64
      {"2002:7f00:1::", "loopback"},                         // 6to4
      {"2002:c0a8:101::1", "private"},                       // 6to4 of 192.168.1.1
      {"2001:0:4136:e378:8000:63bf:80ff:fffe", "loopback"},  // Teredo client 127.0.0.1
      {"2001:2::1", "benchmark"},
      {"2001:470::5efe:7f00:1", "loopback"},    // ISATAP
      {"2001:470::200:5efe:a00:1", "private"},  // ISATAP, universal bit
  };
  for (const auto& [text, rule] : cases) {
    auto a = ParseIpLiteral(text);
    ASSERT_TRUE(a.has_value()) << text;
    auto got = BlockedRule(*a);
    ASSERT_TRUE(got.has_value()) << text;
    EXPECT_EQ(*got, rule) << text;
  }
  EXPECT_FALSE(BlockedRule(*ParseIpLiteral("::ffff:8.8.8.8")).has_value());
  EXPECT_FALSE(BlockedRule(*ParseIpLiteral("64:ff9b::808:808")).has_value());
}

TEST(GuardCheck, RefusesLoopbackInEverySpelling) {
  for (const char* url :
       {"http://127.0.0.1/", "http://2130706433/", "http://0x7f000001/", "http://0177.0.0.1/",
        "http://127.1/", "http://0x7f.1:8080/x", "http://[::1]/", "http://[::ffff:127.0.0.1]/",
        "http://[0:0:0:0:0:ffff:7f00:1]/", "HTTP://LOCALHOST/", "http://localhost./",
        "http://foo.localhost/", "http://127.0.0.1.:80/"}) {
    EXPECT_EQ(RuleOf(url), "loopback") << url;
  }
}

TEST(GuardCheck, RefusesMetadataByNameAndAddressEvenWhenAllowed) {
  EXPECT_EQ(RuleOf("http://169.254.169.254/latest/meta-data/"), "cloud-metadata");
  EXPECT_EQ(RuleOf("http://metadata.google.internal/computeMetadata/v1/"), "cloud-metadata");
  EXPECT_EQ(RuleOf("http://METADATA.GOOGLE.INTERNAL./"), "cloud-metadata");
  EXPECT_EQ(RuleOf("http://[::ffff:a9fe:a9fe]/"), "cloud-metadata");
  EXPECT_EQ(RuleOf("http://0xa9fea9fe/"), "cloud-metadata");
  EXPECT_EQ(RuleOf("http://169.254.169.254/", {"169.254.0.0/16"}), "cloud-metadata");
  EXPECT_EQ(RuleOf("http://169.254.169.254:80/", {"169.254.169.254:80"}), "cloud-metadata");
}

TEST(GuardCheck, RefusesUserinfoZoneIdsAndOddHosts) {
  EXPECT_EQ(RuleOf("http://example.com@127.0.0.1/"), "userinfo");
  EXPECT_EQ(RuleOf("http://user:pw@example.com/"), "userinfo");
  EXPECT_EQ(RuleOf("http://example.com\\@127.0.0.1/"), "userinfo");
  EXPECT_EQ(RuleOf("http://[fe80::1%25eth0]/"), "zone-id");
  EXPECT_EQ(RuleOf("http://1.2.3.999/"), "numeric-host");
  EXPECT_EQ(RuleOf("http://0x7g.1/"), "numeric-host");
  EXPECT_EQ(RuleOf("http://%31%32%37.0.0.1/"), "encoded-host");
}

TEST(GuardCheck, JudgesInternationalNamesAsTheAsciiTheyBecome) {
  auto url = ParseWebUrl(
      "https://B\xC3\xBC"
      "cher.example/k\xC3\xBC"
      "che");
  ASSERT_TRUE(url) << url.error().ToString();
  EXPECT_EQ(url->host, "xn--bcher-kva.example");
  EXPECT_EQ(url->normalized,
            "https://xn--bcher-kva.example/k\xC3\xBC"
            "che");
  EXPECT_EQ(RuleOf("http://ex\xC3\xA4mple.com/"), "");
  // Fullwidth digits and ideographic full stops map to an address: judged as that address.
  EXPECT_EQ(RuleOf("http://\xEF\xBC\x91\xEF\xBC\x92\xEF\xBC\x97\xE3\x80\x82\xEF\xBC\x90"
                   "\xE3\x80\x82\xEF\xBC\x90\xE3\x80\x82\xEF\xBC\x91/"),
            "loopback");
  EXPECT_EQ(RuleOf("http://\xEF\xBD\x8D"
                   "etadata.google.internal/"),
            "cloud-metadata");
  EXPECT_EQ(RuleOf("http://\xCC\x81"
                   "abc.example/"),
            "idn")
      << "a label opening with a combining mark";
}

TEST(GuardCheck, RefusesOtherSchemes) {
  EXPECT_EQ(RuleOf("file:///etc/passwd"), "scheme");
  EXPECT_EQ(RuleOf("ftp://example.com/"), "scheme");
  EXPECT_EQ(RuleOf("gopher://example.com/"), "scheme");
  EXPECT_EQ(RuleOf("javascript:alert(1)"), "error: not an absolute http(s) URL");
}

TEST(GuardCheck, RefusesEachPrivateClass) {
  EXPECT_EQ(RuleOf("http://10.0.0.1/"), "private");
  EXPECT_EQ(RuleOf("http://0.0.0.0/"), "unspecified");
  EXPECT_EQ(RuleOf("http://0/"), "unspecified");
  EXPECT_EQ(RuleOf("http://169.254.3.4/"), "link-local");
  EXPECT_EQ(RuleOf("http://100.64.1.1/"), "cgnat");
  EXPECT_EQ(RuleOf("http://198.19.1.1/"), "benchmark");
  EXPECT_EQ(RuleOf("http://239.1.1.1/"), "multicast");
  EXPECT_EQ(RuleOf("http://[fe80::1]/"), "link-local");
  EXPECT_EQ(RuleOf("http://[fd00::1]/"), "private");
  EXPECT_EQ(RuleOf("http://[64:ff9b::a00:1]/"), "private");
  EXPECT_EQ(RuleOf("http://[2002:a00:1::1]/"), "private");
}

TEST(GuardCheck, RefusesUrlsCarryingSecrets) {
  EXPECT_EQ(RuleOf("https://example.com/?key=sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"),
            "secret-in-url");
  EXPECT_EQ(RuleOf("https://example.com/?t=sk%2Dproj%2Dabcdefghijklmnopqrstuvwxyz0123456789"),
            "secret-in-url");
  EXPECT_EQ(RuleOf("https://example.com/ghp_abcdefghijklmnopqrstuvwxyz0123456789"),
            "secret-in-url");
  EXPECT_EQ(RuleOf("https://example.com/docs?page=2"), "");
}

TEST(GuardCheck, AllowListOpensExactlyWhatItNames) {
  EXPECT_EQ(RuleOf("http://127.0.0.1:8080/", {"127.0.0.1:8080"}), "");
  EXPECT_EQ(RuleOf("http://127.0.0.1:8081/", {"127.0.0.1:8080"}), "loopback");
  EXPECT_EQ(RuleOf("http://2130706433:8080/", {"127.0.0.1:8080"}), "");  // same address
  EXPECT_EQ(RuleOf("http://10.1.2.3:9/", {"10.1.0.0/16"}), "");
  EXPECT_EQ(RuleOf("http://10.2.2.3:9/", {"10.1.0.0/16"}), "private");
  EXPECT_EQ(RuleOf("http://[fd00::5]:1/", {"fd00::/8"}), "");
  EXPECT_EQ(RuleOf("http://localhost:3000/", {"localhost:3000"}), "");
  EXPECT_EQ(RuleOf("http://[::1]:3000/", {"[::1]:3000"}), "");
  EXPECT_FALSE(
      NetworkGuard::Create({.allow_private = {"10.0.0.0/33"}, .resolver = nullptr}).has_value());
  EXPECT_FALSE(
      NetworkGuard::Create({.allow_private = {"example.com"}, .resolver = nullptr}).has_value());
  EXPECT_FALSE(
      NetworkGuard::Create({.allow_private = {"nonsense/8"}, .resolver = nullptr}).has_value());
}

TEST(GuardCheck, RefusalNamesTheRuleAndTheWayOut) {
  auto r = Guard()->Check("http://10.0.0.1:8080/x?secret=1");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(r.error().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(r.error().message().find("(rule: private)"), std::string::npos);
  EXPECT_NE(r.error().message().find("web.allow_private"), std::string::npos);
  EXPECT_EQ(r.error().message().find("secret=1"), std::string::npos);  // no path or query
}

TEST(GuardCheck, NormalizesWhatIsHandedOn) {
  auto r = Guard({"127.0.0.1:80"})->Check("HTTP://0x7f.1/a/b?c=d#frag");
  ASSERT_TRUE(r.has_value()) << r.error().message();
  EXPECT_EQ(r->normalized, "http://127.0.0.1/a/b?c=d");
  auto v6 = Guard({"[::1]:8080"})->Check("http://[::1]:8080?x");
  ASSERT_TRUE(v6.has_value()) << v6.error().message();
  EXPECT_EQ(v6->normalized, "http://[::1]:8080/?x");
  auto name = Guard()->Check("https://Example.COM./");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->host, "example.com");
  EXPECT_EQ(name->port, 443);
}

// A resolver that answers from a script, for the names the tests make up.
class ScriptedResolver : public Resolver {
 public:
  explicit ScriptedResolver(std::vector<std::string> answers) : answers_(std::move(answers)) {}
  Result<std::vector<IpAddress>> Resolve(const std::string&, const std::stop_token&) override {
    std::vector<IpAddress> out;
    for (const auto& a : answers_) out.push_back(*ParseIpLiteral(a));
    return out;
  }

 private:
  std::vector<std::string> answers_;
};

TEST(GuardAdmit, JudgesEveryResolvedAddress) {
  auto mixed = NetworkGuard::Create({.allow_private = {},
                                     .resolver = std::make_shared<ScriptedResolver>(
                                         std::vector<std::string>{"93.184.216.34", "127.0.0.1"})});
  auto r = (*mixed)->Admit("http://mixed.test/");
  ASSERT_FALSE(r.has_value());
  EXPECT_EQ(RefusalRule(r.error()), "loopback");
  EXPECT_NE(r.error().message().find("resolves to 127.0.0.1"), std::string::npos);

  auto mapped = NetworkGuard::Create({.allow_private = {},
                                      .resolver = std::make_shared<ScriptedResolver>(
                                          std::vector<std::string>{"::ffff:10.0.0.1"})});
  EXPECT_EQ(RefusalRule((*mapped)->Admit("http://mapped.test/").error()), "private");

  auto fine =
      NetworkGuard::Create({.allow_private = {},
                            .resolver = std::make_shared<ScriptedResolver>(
                                std::vector<std::string>{"93.184.216.34", "2606:2800:220:1::1"})});
  auto ok = (*fine)->Admit("https://fine.test/");
  ASSERT_TRUE(ok.has_value()) << ok.error().message();
  EXPECT_EQ(ok->PinList(), (std::vector<std::string>{"93.184.216.34", "2606:2800:220:1::1"}));
}

}  // namespace
}  // namespace talaria::web
