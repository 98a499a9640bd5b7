#include "talaria/core/client_channel.h"

namespace talaria {

std::optional<std::string> WhyClientCannotAnswer(const ClientChannel* client,
                                                 std::string_view method) {
  if (client == nullptr)
    return std::string(method) + " needs an MCP client, and this call has none";
  const std::string_view capability = method == "elicitation/create"       ? "elicitation"
                                      : method == "sampling/createMessage" ? "sampling"
                                      : method == "roots/list"             ? "roots"
                                                                           : "";
  if (capability.empty() || client->Supports(capability)) return std::nullopt;
  std::string why = "the MCP client did not declare the ";
  why += capability;
  why += " capability, so it cannot answer ";
  why += method;
  return why;
}

ClientChannel::Deadline EarlierDeadline(ClientChannel::Deadline deadline,
                                        std::chrono::milliseconds timeout) {
  const auto now = std::chrono::steady_clock::now();
  if (deadline <= now) return deadline;
  return deadline - now < timeout ? deadline : now + timeout;  // no now + timeout past max()
}

}  // namespace talaria
