// The reports of a discovery: verdict and kind names, and each candidate's and the whole
// report's JSON (`talaria plugins --json`).
#include <algorithm>
#include <nlohmann/json.hpp>

#include "talaria/plugins/elf_scan.h"
#include "talaria/plugins/plugin_loader.h"

namespace talaria::plugins {
namespace {

Json StringArray(const std::vector<std::string>& items) {
  Json out = Json::array();
  for (const auto& s : items) out.push_back(s);
  return out;
}

}  // namespace

std::string_view VerdictName(Verdict verdict) {
  switch (verdict) {
    case Verdict::kLoaded:
      return "loaded";
    case Verdict::kSkipped:
      return "skipped";
    case Verdict::kFailed:
      return "failed";
  }
  return "unknown";
}

std::string_view CandidateKindName(CandidateKind kind) {
  return kind == CandidateKind::kScript ? "script" : "shared_object";
}

Json CandidateReport::ToJson() const {
  Json j = Json::object();
  j["path"] = path;
  j["name"] = name;
  j["kind"] = std::string(CandidateKindName(kind));
  j["verdict"] = std::string(VerdictName(verdict));
  j["reason"] = reason;
  j["scan"] = std::string(ScanOutcomeName(scan));
  j["scan_cached"] = scan_cached;
  j["interface_version"] = interface_version;
  j["trial"] = trial;
  j["tools"] = StringArray(tools);
  j["refused"] = StringArray(refused);
  return j;
}

size_t DiscoveryReport::Count(Verdict verdict) const {
  return static_cast<size_t>(
      std::count_if(candidates.begin(), candidates.end(),
                    [&](const CandidateReport& c) { return c.verdict == verdict; }));
}

Json DiscoveryReport::ToJson() const {
  Json j = Json::object();
  Json list = Json::array();
  for (const auto& c : candidates) list.push_back(c.ToJson());
  j["candidates"] = std::move(list);
  j["warnings"] = StringArray(warnings);
  return j;
}

}  // namespace talaria::plugins
