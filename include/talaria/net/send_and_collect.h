// One whole exchange: send a request with a client of its own and keep the whole body. What
// every REST client of talaria's (search backends, providers, platforms, gateways) does; the
// caller judges the status.
//
//   net::HttpRequest req{.method = "POST", .url = url, .body = body};
//   req.max_body_bytes = 4 << 20;
//   auto answer = net::SendAndCollect(req, stop);
//   if (answer && answer->head.status == 200) Parse(answer->body);
#pragma once

#include <stop_token>
#include <string>

#include "talaria/base/status.h"
#include "talaria/net/http_client.h"

namespace talaria::net {

struct CollectedResponse {
  HttpResponseHead head;
  std::string body;  // at most request.max_body_bytes when that is set (head.truncated then)
};

// Errors: those of MakeHttpClient and HttpClient::Send.
Result<CollectedResponse> SendAndCollect(const HttpRequest& request, std::stop_token stop = {});

}  // namespace talaria::net
