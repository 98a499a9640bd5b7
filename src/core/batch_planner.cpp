#include "talaria/core/batch_planner.h"

#include <algorithm>
#include <memory>
#include <string>
#include <unordered_map>
#include <utility>

#include <nlohmann/json.hpp>

#include "core/path_scope.h"
#include "talaria/base/strings.h"

namespace talaria {
namespace {

CallAdmission Barrier(std::string reason) {
  CallAdmission a;
  a.admission = Admission::kBarrier;
  a.reason = std::move(reason);
  return a;
}

// Per planning pass: the canonicalizer's cache, and each tool's parsed parameter properties
// (only looked at when a path argument is missing and may have a schema default).
class Planner {
 public:
  // `snapshot` may be null when only AdmitParsed is used (the caller has the entry).
  explicit Planner(const RegistrySnapshot* snapshot) : snapshot_(snapshot) {}

  CallAdmission Admit(const PlannedCall& call) {
    const ToolEntry* entry = snapshot_->Find(call.name);
    if (entry == nullptr) return Barrier("unknown tool");
    if (entry->parallel() == ParallelClass::kNever) return Barrier("never parallel");

    Json args = Json::object();
    if (!IsBlank(call.raw_args, kJsonSpace)) {
      Result<Json> parsed = ParseJson(call.raw_args);
      if (!parsed) return Barrier("arguments are not valid JSON");
      args = std::move(*parsed);
    }
    return AdmitParsed(*entry, args, call.cwd);
  }

  CallAdmission AdmitParsed(const ToolEntry& entry, const Json& args, std::string_view cwd) {
    if (entry.parallel() == ParallelClass::kNever) return Barrier("never parallel");
    if (!args.is_object()) return Barrier("arguments are not a JSON object");
    if (entry.parallel() == ParallelClass::kSafe) {
      CallAdmission a;
      a.admission = Admission::kSafe;
      return a;
    }
    return AdmitScoped(entry, args, cwd);
  }

 private:
  CallAdmission AdmitScoped(const ToolEntry& entry, const Json& args, std::string_view cwd) {
    CallAdmission a;
    a.admission = Admission::kPathScoped;
    const PathAccess access = entry.path_access();
    auto add_scope = [&](std::string_view path) {
      a.scopes.push_back(PathScope{canonicalizer_.Canonicalize(cwd, path), access});
    };

    if (const CallPathsFn call_paths = entry.call_paths(); call_paths != nullptr) {
      Result<std::optional<std::vector<std::string>>> paths = call_paths(args);
      if (!paths) return Barrier(paths.error().message());
      if (paths->has_value()) {
        for (const std::string& p : **paths) add_scope(p);
        if (a.scopes.empty()) return Barrier("no path to scope the call");
        return a;
      }
    }

    for (const std::string& name : entry.path_args()) {
      auto it = args.find(name);
      if (it == args.end()) {
        if (const std::string* fallback = SchemaDefault(entry, name)) add_scope(*fallback);
        continue;
      }
      if (!it->is_string()) return Barrier("path argument '" + name + "' is not a string");
      add_scope(it->get_ref<const std::string&>());
    }
    if (a.scopes.empty()) return Barrier("no path to scope the call");
    return a;
  }

  // The string "default" of parameter `name` in the tool's schema, or null.
  const std::string* SchemaDefault(const ToolEntry& entry, const std::string& name) {
    auto [it, inserted] = properties_.try_emplace(&entry);
    if (inserted) {
      Result<Json> schema = ParseJson(entry.schema_text());
      if (schema && schema->is_object()) {
        auto params = schema->find("parameters");
        if (params != schema->end() && params->is_object()) {
          auto props = params->find("properties");
          if (props != params->end() && props->is_object()) it->second = std::move(*props);
        }
      }
    }
    const Json& props = it->second;
    if (!props.is_object()) return nullptr;
    auto prop = props.find(name);
    if (prop == props.end() || !prop->is_object()) return nullptr;
    auto fallback = prop->find("default");
    if (fallback == prop->end() || !fallback->is_string()) return nullptr;
    return &fallback->get_ref<const std::string&>();
  }

  const RegistrySnapshot* snapshot_;
  PathCanonicalizer canonicalizer_;
  std::unordered_map<const ToolEntry*, Json> properties_;
};

bool ScopesConflict(const CallAdmission& a, const CallAdmission& b) {
  for (const PathScope& x : a.scopes) {
    for (const PathScope& y : b.scopes) {
      if ((x.access == PathAccess::kWrite || y.access == PathAccess::kWrite) &&
          PathsOverlap(x.path, y.path)) {
        return true;
      }
    }
  }
  return false;
}

std::string_view AdmissionName(Admission a) {
  switch (a) {
    case Admission::kBarrier:
      return "barrier";
    case Admission::kSafe:
      return "safe";
    case Admission::kPathScoped:
      return "path_scoped";
  }
  return "barrier";
}

std::string_view AccessName(PathAccess a) { return a == PathAccess::kWrite ? "write" : "read"; }

}  // namespace

CallAdmission AdmitCall(const ToolEntry& entry, const Json& args, std::string_view cwd) {
  // One call: the planner's per-pass caches start empty, as for a batch of one.
  return Planner(nullptr).AdmitParsed(entry, args, cwd);
}

bool AdmissionsConflict(const CallAdmission& a, const CallAdmission& b) {
  if (a.admission == Admission::kBarrier || b.admission == Admission::kBarrier) return true;
  return ScopesConflict(a, b);
}

BatchPlan PlanBatchDetailed(std::span<const PlannedCall> calls, const Registry& registry) {
  BatchPlan plan;
  plan.calls.reserve(calls.size());
  const std::shared_ptr<const RegistrySnapshot> snapshot = registry.Snapshot();
  Planner planner(snapshot.get());
  for (const PlannedCall& call : calls) plan.calls.push_back(planner.Admit(call));

  std::vector<PlannedSegment>& segments = plan.segments;
  auto add_sequential = [&segments](size_t i) {
    if (segments.empty() || segments.back().parallel) segments.push_back(PlannedSegment{});
    segments.back().calls.push_back(i);
  };
  std::vector<size_t> run;
  auto close_run = [&] {
    if (run.size() >= 2) {
      segments.push_back(PlannedSegment{true, std::move(run)});
    } else {
      for (size_t i : run) add_sequential(i);
    }
    run.clear();
  };

  for (size_t i = 0; i < calls.size(); ++i) {
    const CallAdmission& admission = plan.calls[i];
    switch (admission.admission) {
      case Admission::kBarrier:
        close_run();
        add_sequential(i);
        break;
      case Admission::kSafe:
        run.push_back(i);
        break;
      case Admission::kPathScoped:
        if (std::any_of(run.begin(), run.end(),
                        [&](size_t j) { return ScopesConflict(admission, plan.calls[j]); })) {
          close_run();  // this call starts the next run, after the one it conflicts with
        }
        run.push_back(i);
        break;
    }
  }
  close_run();
  return plan;
}

std::vector<PlannedSegment> PlanBatch(std::span<const PlannedCall> calls,
                                      const Registry& registry) {
  return PlanBatchDetailed(calls, registry).segments;
}

Json PlanToJson(const BatchPlan& plan, std::span<const PlannedCall> calls) {
  Json out = Json::array();
  for (const PlannedSegment& segment : plan.segments) {
    Json indices = Json::array();
    Json tools = Json::array();
    Json admissions = Json::array();
    for (size_t i : segment.calls) {
      indices.push_back(i);
      tools.push_back(i < calls.size() ? std::string(calls[i].name) : std::string());
      Json entry = Json::object();
      if (i < plan.calls.size()) {
        const CallAdmission& a = plan.calls[i];
        entry["class"] = AdmissionName(a.admission);
        if (!a.reason.empty()) entry["reason"] = a.reason;
        if (!a.scopes.empty()) {
          Json scopes = Json::array();
          for (const PathScope& s : a.scopes) {
            scopes.push_back(Json{{"path", s.path}, {"access", AccessName(s.access)}});
          }
          entry["scopes"] = std::move(scopes);
        }
      }
      admissions.push_back(std::move(entry));
    }
    Json seg = Json::object();
    seg["parallel"] = segment.parallel;
    seg["calls"] = std::move(indices);
    seg["tools"] = std::move(tools);
    seg["admissions"] = std::move(admissions);
    out.push_back(std::move(seg));
  }
  return out;
}

std::string FormatPlan(const BatchPlan& plan, std::span<const PlannedCall> calls) {
  std::string out;
  for (size_t n = 0; n < plan.segments.size(); ++n) {
    const PlannedSegment& segment = plan.segments[n];
    out += std::to_string(n + 1);
    out += segment.parallel ? " parallel   " : " sequential ";
    for (size_t k = 0; k < segment.calls.size(); ++k) {
      const size_t i = segment.calls[k];
      if (k > 0) out += ", ";
      out += '#' + std::to_string(i) + ' ';
      if (i < calls.size()) out += calls[i].name;
      if (i < plan.calls.size() && !plan.calls[i].reason.empty()) {
        out += " (" + plan.calls[i].reason + ")";
      }
    }
    out += '\n';
  }
  return out;
}

}  // namespace talaria
