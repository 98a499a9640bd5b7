#include "talaria/net/send_and_collect.h"

#include <memory>
#include <string_view>
#include <utility>

namespace talaria::net {

Result<CollectedResponse> SendAndCollect(const HttpRequest& request, std::stop_token stop) {
  auto client = MakeHttpClient();
  if (!client) return Err(client.error());
  CollectedResponse answer;
  auto head = (*client)->Send(
      request,
      [&answer](std::string_view chunk) {
        answer.body.append(chunk);
        return true;
      },
      std::move(stop));
  if (!head) return Err(head.error());
  answer.head = std::move(*head);
  return answer;
}

}  // namespace talaria::net
