// SendMail over libcurl's SMTP (talaria/net/mail_client.h). One easy handle per message: mail is
// rare, so there is no connection to keep. The server's refusal of any command (a 5xx to RCPT,
// a 4xx after DATA) fails the send with libcurl's account of the reply.
#include <curl/curl.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <string_view>

#include "net/net_module.h"

namespace talaria::net::net_internal {
namespace {

struct MailTransfer {
  std::string_view rest;  // what is left of the message to upload
  const std::stop_token* stop = nullptr;
};

size_t OnRead(char* buffer, size_t size, size_t count, void* user) {
  auto* t = static_cast<MailTransfer*>(user);
  const size_t n = std::min(size * count, t->rest.size());
  std::memcpy(buffer, t->rest.data(), n);
  t->rest.remove_prefix(n);
  return n;
}

int OnProgress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  const auto* t = static_cast<MailTransfer*>(user);
  return t->stop->stop_requested() ? 1 : 0;  // non-zero aborts with CURLE_ABORTED_BY_CALLBACK
}

// scheme://host:port of the URL (no credentials).
std::string MailOrigin(std::string_view url) {
  const size_t scheme_end = url.find("://");
  const size_t start = scheme_end == std::string_view::npos ? 0 : scheme_end + 3;
  size_t end = url.find_first_of("/?#", start);
  if (end == std::string_view::npos) end = url.size();
  std::string_view authority = url.substr(start, end - start);
  const size_t at = authority.rfind('@');
  if (at != std::string_view::npos) authority.remove_prefix(at + 1);
  return std::string(url.substr(0, start)) + std::string(authority);
}

struct EasyHandle {
  CURL* easy = curl_easy_init();
  curl_slist* rcpt = nullptr;
  EasyHandle() = default;
  EasyHandle(const EasyHandle&) = delete;
  EasyHandle& operator=(const EasyHandle&) = delete;
  ~EasyHandle() {
    curl_slist_free_all(rcpt);
    if (easy != nullptr) curl_easy_cleanup(easy);
  }
};

}  // namespace

Status CurlSendMail(const MailRequest& request, const std::stop_token& stop) {
  const bool smtps = request.url.starts_with("smtps://");
  if (!smtps && !request.url.starts_with("smtp://")) {
    return InvalidArgumentError("mail: the server URL must start with smtp:// or smtps://");
  }
  if (request.recipients.empty()) return InvalidArgumentError("mail: no recipient");
  if (request.from.empty()) return InvalidArgumentError("mail: no sender address");
  TALARIA_RETURN_IF_ERROR(StartCurl());
  EasyHandle h;
  if (h.easy == nullptr) return UnavailableError("libcurl could not create a transfer handle");
  const std::string origin = MailOrigin(request.url);
  for (const std::string& to : request.recipients) {
    // Angle brackets and line breaks would let one recipient smuggle SMTP commands.
    if (to.find_first_of("<>\r\n") != std::string::npos) {
      return InvalidArgumentError("mail: a recipient address holds <, > or a line break");
    }
    curl_slist* next = curl_slist_append(h.rcpt, ("<" + to + ">").c_str());
    if (next == nullptr) return UnavailableError("mail: out of memory");
    h.rcpt = next;
  }
  if (request.from.find_first_of("<>\r\n") != std::string::npos) {
    return InvalidArgumentError("mail: the sender address holds <, > or a line break");
  }
  const std::string from = "<" + request.from + ">";
  MailTransfer t{request.message, &stop};
  char error[CURL_ERROR_SIZE] = {};
  CURL* e = h.easy;
  curl_easy_setopt(e, CURLOPT_URL, request.url.c_str());
  curl_easy_setopt(e, CURLOPT_PROTOCOLS_STR, "smtp,smtps");
  curl_easy_setopt(e, CURLOPT_MAIL_FROM, from.c_str());
  curl_easy_setopt(e, CURLOPT_MAIL_RCPT, h.rcpt);
  curl_easy_setopt(e, CURLOPT_UPLOAD, 1L);
  curl_easy_setopt(e, CURLOPT_READFUNCTION, &OnRead);
  curl_easy_setopt(e, CURLOPT_READDATA, &t);
  curl_easy_setopt(e, CURLOPT_INFILESIZE_LARGE, static_cast<curl_off_t>(request.message.size()));
  curl_easy_setopt(e, CURLOPT_NOPROGRESS, 0L);
  curl_easy_setopt(e, CURLOPT_XFERINFOFUNCTION, &OnProgress);
  curl_easy_setopt(e, CURLOPT_XFERINFODATA, &t);
  curl_easy_setopt(e, CURLOPT_ERRORBUFFER, error);
  curl_easy_setopt(e, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(
      e, CURLOPT_CONNECTTIMEOUT_MS,
      static_cast<long>(request.connect_timeout.count()));  // NOLINT(google-runtime-int)
  curl_easy_setopt(e, CURLOPT_TIMEOUT_MS,
                   static_cast<long>(request.total_timeout.count()));  // NOLINT(google-runtime-int)
  if (!smtps) {
    curl_easy_setopt(e, CURLOPT_USE_SSL,
                     static_cast<long>(request.allow_plaintext  // NOLINT(google-runtime-int)
                                           ? CURLUSESSL_TRY
                                           : CURLUSESSL_ALL));
  }
  if (!request.ca_file.empty()) curl_easy_setopt(e, CURLOPT_CAINFO, request.ca_file.c_str());
  if (!request.username.empty()) {
    curl_easy_setopt(e, CURLOPT_USERNAME, request.username.c_str());
    curl_easy_setopt(e, CURLOPT_PASSWORD, request.password.c_str());
  }
  const CURLcode code = curl_easy_perform(e);
  if (code == CURLE_OK) return Status::Ok();
  const std::string cause = error[0] != '\0' ? error : curl_easy_strerror(code);
  const std::string what = "mail via " + origin + ": " + cause;
  switch (code) {
    case CURLE_ABORTED_BY_CALLBACK:
      return CancelledError("mail via " + origin + ": cancelled");
    case CURLE_OPERATION_TIMEDOUT:
      return DeadlineExceededError(what);
    case CURLE_URL_MALFORMAT:
    case CURLE_UNSUPPORTED_PROTOCOL:
      return InvalidArgumentError(what);
    default:
      return UnavailableError(what);
  }
}

}  // namespace talaria::net::net_internal
