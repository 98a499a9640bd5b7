// Whole-graph passes over compiled schema nodes: collapsing $ref chains, refusing recursion
// that never consumes the instance, and summarising which keyword families each node uses.
#include <algorithm>
#include <cstdint>
#include <deque>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "core/schema_validator_internal.h"

namespace talaria::schema_internal {
namespace {

// kInPlace edges apply the child to the same instance, kDescend edges to a part of it (or, for
// propertyNames, to a key), so only cycles of kInPlace edges can loop forever.
enum class EdgeKind { kInPlace, kDescend };

// Calls f(id, kind) on every child reference of `node`; NodeT may be const.
template <typename NodeT, typename F>
void ForEachEdge(NodeT& node, F&& f) {
  auto visit = [&](auto& id, EdgeKind kind) {
    if (id != kNoNode) f(id, kind);
  };
  visit(node.ref, EdgeKind::kInPlace);
  for (auto& id : node.all_of) visit(id, EdgeKind::kInPlace);
  for (auto& id : node.any_of) visit(id, EdgeKind::kInPlace);
  for (auto& id : node.one_of) visit(id, EdgeKind::kInPlace);
  visit(node.not_node, EdgeKind::kInPlace);
  visit(node.if_node, EdgeKind::kInPlace);
  visit(node.then_node, EdgeKind::kInPlace);
  visit(node.else_node, EdgeKind::kInPlace);
  for (auto& d : node.dependencies) visit(d.node, EdgeKind::kInPlace);
  visit(node.items, EdgeKind::kDescend);
  for (auto& id : node.tuple_items) visit(id, EdgeKind::kDescend);
  visit(node.additional_items, EdgeKind::kDescend);
  visit(node.contains, EdgeKind::kDescend);
  for (auto& p : node.properties) visit(p.node, EdgeKind::kDescend);
  for (auto& p : node.pattern_properties) visit(p.node, EdgeKind::kDescend);
  visit(node.additional_properties, EdgeKind::kDescend);
  visit(node.property_names, EdgeKind::kDescend);
}

Status InvalidRef(const std::string& path, std::string_view problem) {
  return InvalidArgumentError("invalid schema at " + path + ": \"$ref\" " + std::string(problem));
}

}  // namespace

Result<NodeId> CollapseRefs(std::vector<Node>& nodes, const std::vector<std::string>& paths,
                            NodeId root) {
  std::vector<NodeId> final_of(nodes.size(), kNoNode);
  for (NodeId id = 0; id < nodes.size(); ++id) {
    NodeId at = id;
    for (size_t hops = 0; nodes[at].ref != kNoNode; ++hops) {
      if (hops > nodes.size()) return Err(InvalidRef(paths[id], "is a cycle of references"));
      at = nodes[at].ref;
    }
    final_of[id] = at;
  }
  for (Node& node : nodes) {
    if (node.ref != kNoNode) continue;  // nothing points at a $ref node any more
    ForEachEdge(node, [&](NodeId& id, EdgeKind) { id = final_of[id]; });
  }
  return final_of[root];
}

Status RejectInPlaceCycles(const std::vector<Node>& nodes, const std::vector<std::string>& paths) {
  // Kahn's algorithm: whatever cannot be peeled off in topological order sits on (or below) a
  // cycle. No recursion, so a long chain of references cannot exhaust the stack.
  std::vector<std::vector<NodeId>> out_edges(nodes.size()), in_edges(nodes.size());
  std::vector<uint32_t> in_degree(nodes.size(), 0);
  for (NodeId id = 0; id < nodes.size(); ++id) {
    if (nodes[id].ref != kNoNode) continue;
    ForEachEdge(nodes[id], [&](NodeId to, EdgeKind kind) {
      if (kind != EdgeKind::kInPlace) return;
      out_edges[id].push_back(to);
      in_edges[to].push_back(id);
      ++in_degree[to];
    });
  }
  std::deque<NodeId> ready;
  for (NodeId id = 0; id < nodes.size(); ++id) {
    if (in_degree[id] == 0) ready.push_back(id);
  }
  size_t peeled = 0;
  for (; !ready.empty(); ++peeled) {
    const NodeId id = ready.front();
    ready.pop_front();
    for (const NodeId to : out_edges[id]) {
      if (--in_degree[to] == 0) ready.push_back(to);
    }
  }
  if (peeled == nodes.size()) return {};
  // Leftover nodes may merely hang below a cycle; walking back along leftover edges for as
  // many steps as there are nodes is sure to end on the cycle itself.
  const auto leftover = [&](NodeId id) { return in_degree[id] > 0; };
  auto at = static_cast<NodeId>(
      std::find_if(in_degree.begin(), in_degree.end(), [](uint32_t d) { return d > 0; }) -
      in_degree.begin());
  for (size_t step = 0; step < nodes.size(); ++step) {
    at = *std::find_if(in_edges[at].begin(), in_edges[at].end(), leftover);
  }
  return InvalidRef(paths[at], "recursion never descends into the instance");
}

void SetFamilyFlags(Node& n) {
  n.has_number_checks = n.numbers != nullptr;
  n.has_string_checks = n.min_length > 0 || n.max_length != kUnbounded || n.pattern != nullptr;
  n.has_array_checks = (n.items != kNoNode && n.items != kTrueNode) || n.has_tuple_items ||
                       n.min_items > 0 || n.max_items != kUnbounded || n.unique_items ||
                       n.contains != kNoNode;
  n.has_object_checks = !n.properties.empty() || !n.pattern_properties.empty() ||
                        n.additional_properties != kNoNode || n.required_mask != 0 ||
                        !n.required_extra.empty() || n.min_properties > 0 ||
                        n.max_properties != kUnbounded || !n.dependencies.empty() ||
                        n.property_names != kNoNode;
  n.has_generic_checks = n.values != nullptr || !n.all_of.empty() || !n.any_of.empty() ||
                         !n.one_of.empty() || n.not_node != kNoNode || n.if_node != kNoNode;
  n.type_only = n.ref == kNoNode && !n.reject_all && !n.has_number_checks && !n.has_string_checks &&
                !n.has_array_checks && !n.has_object_checks && !n.has_generic_checks;
}

}  // namespace talaria::schema_internal
