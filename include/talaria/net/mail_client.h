// SendMail: one e-mail through an SMTP server (the send_message tool's e-mail platform), by
// libcurl in libtalaria_net.so like HttpClient. The caller builds the RFC 5322 message (headers,
// blank line, body); this hands it over with MAIL FROM / RCPT TO / DATA and reports whether the
// server accepted it (its 250 after the final dot), never only that it was queued here.
// Thread-safety: SendMail is thread-safe (one libcurl handle per call).
#pragma once

#include <chrono>
#include <stop_token>
#include <string>
#include <vector>

#include "talaria/base/status.h"

namespace talaria::net {

struct MailRequest {
  // smtp://host[:port] (STARTTLS is required unless `allow_plaintext`) or smtps://host[:port].
  std::string url;
  std::string username;  // empty: no AUTH
  std::string password;
  std::string from;                     // the envelope sender, a bare address
  std::vector<std::string> recipients;  // bare addresses; at least one
  std::string message;                  // the whole message, CRLF line ends
  // Send over a connection without TLS (a relay on localhost, a test's fake). Off: smtp:// must
  // upgrade with STARTTLS or the send fails.
  bool allow_plaintext = false;
  std::string ca_file;  // as HttpRequest::ca_file
  std::chrono::milliseconds connect_timeout{15'000};
  std::chrono::milliseconds total_timeout{60'000};
};

// Errors: InvalidArgument (no recipient, bad URL), Unavailable (cannot connect, TLS, the server
// refused a command: the message carries the server's reply), DeadlineExceeded, Cancelled.
// Messages name scheme://host:port, never the credentials.
Status SendMail(const MailRequest& request, const std::stop_token& stop = {});

}  // namespace talaria::net
