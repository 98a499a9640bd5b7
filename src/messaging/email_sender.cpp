// E-mail through SMTP (net::SendMail, libcurl): a plain-text UTF-8 message, base64 in the body
// so any line length and byte passes any server, the subject its first line (RFC 2047-encoded
// when not ASCII). Sent means the server answered 250 to the message; the id is the Message-ID
// talaria wrote. With MEDIA: files, the one message is multipart/mixed: the text, then each file
// as a base64 attachment part (filename quoted, or RFC 2231-encoded when not ASCII).
#include <ctime>
#include <string>

#include "messaging/media_types.h"
#include "messaging/platform_http.h"
#include "messaging/sender.h"
#include "talaria/base/base64.h"
#include "talaria/base/random.h"
#include "talaria/base/uri.h"
#include "talaria/net/mail_client.h"

namespace talaria::messaging {
namespace {

constexpr size_t kSubjectChars = 70;

bool IsAscii(std::string_view s) {
  for (unsigned char c : s) {
    if (c >= 0x80) return false;
  }
  return true;
}

// A header value: no line breaks (they would start a header of the sender's choosing).
std::string HeaderSafe(std::string_view s) {
  std::string out;
  for (char c : s) out += (c == '\r' || c == '\n') ? ' ' : c;
  return out;
}

std::string Subject(std::string_view text) {
  std::string_view first = text.substr(0, text.find('\n'));
  while (!first.empty() && (first.front() == ' ' || first.front() == '#')) first.remove_prefix(1);
  std::string subject;
  // Whole UTF-8 characters only.
  for (size_t i = 0; i < first.size() && subject.size() < kSubjectChars;) {
    size_t n = 1;
    const auto c = static_cast<unsigned char>(first[i]);
    if (c >= 0xF0) {
      n = 4;
    } else if (c >= 0xE0) {
      n = 3;
    } else if (c >= 0xC0) {
      n = 2;
    }
    if (i + n > first.size()) break;
    subject.append(first.substr(i, n));
    i += n;
  }
  subject = HeaderSafe(subject);
  if (subject.empty()) subject = "Message from talaria";
  if (!IsAscii(subject)) subject = "=?UTF-8?B?" + Base64Encode(subject) + "?=";
  return subject;
}

std::string Domain(std::string_view address) {
  const size_t at = address.rfind('@');
  return at == std::string_view::npos ? "talaria.local" : std::string(address.substr(at + 1));
}

std::string DateHeader() {
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  char buf[64];
  std::strftime(buf, sizeof buf, "%a, %d %b %Y %H:%M:%S +0000", &tm);
  return buf;
}

// A MIME parameter value: quoted when plain ASCII, else RFC 2231's UTF-8 percent form.
std::string FileNameParam(std::string_view key, std::string_view name) {
  bool plain = IsAscii(name);
  for (char c : name) plain = plain && c != '"' && c != '\\' && c >= 0x20 && c != 0x7f;
  if (plain) return std::string(key) + "=\"" + std::string(name) + "\"";
  // RFC 2231/5987: percent-encoded UTF-8; every unreserved character is an attr-char.
  return std::string(key) + "*=UTF-8''" + PercentEncode(name);
}

// `bytes` in base64, 76 characters a line (RFC 2045).
void AppendBase64Lines(std::string& m, std::string_view bytes) {
  const std::string body = Base64Encode(bytes);
  for (size_t i = 0; i < body.size(); i += 76) m += body.substr(i, 76) + "\r\n";
}

class EmailSender final : public Sender {
 public:
  explicit EmailSender(PlatformSettings p) : p_(std::move(p)) {}

  size_t limit() const override { return 0; }  // one message, however long
  bool sends_files() const override { return true; }
  bool bundles_files() const override { return true; }

  Result<std::string> Send(const Destination& d, std::string_view text,
                           const CallLimits& limits) override {
    return SendWithFiles(d, text, {}, limits);
  }

  // Plain text alone, or multipart/mixed: the text, then one base64 part per file.
  Result<std::string> SendWithFiles(const Destination& d, std::string_view text,
                                    const std::vector<Attachment>& files,
                                    const CallLimits& limits) override {
    const std::string message_id = "<talaria." + RandomHex(12) + "@" + Domain(p_.from) + ">";
    std::string m;
    m += "From: " + HeaderSafe(p_.from) + "\r\n";
    m += "To: " + HeaderSafe(d.chat) + "\r\n";
    m +=
        "Subject: " +
        Subject(text.empty() && !files.empty() ? std::string_view(files.front().file_name) : text) +
        "\r\n";
    m += "Date: " + DateHeader() + "\r\n";
    m += "Message-ID: " + message_id + "\r\n";
    m += "MIME-Version: 1.0\r\n";
    constexpr std::string_view kText =
        "Content-Type: text/plain; charset=utf-8\r\nContent-Transfer-Encoding: base64\r\n\r\n";
    if (files.empty()) {
      m += kText;
      AppendBase64Lines(m, text);
    } else {
      // Base64 lines never hold '-', so no part can contain the boundary line.
      const std::string boundary = "talaria-" + RandomHex(16);
      m += "Content-Type: multipart/mixed; boundary=\"" + boundary + "\"\r\n\r\n";
      m += "This is a MIME message with " + std::to_string(files.size()) + " attachment(s).\r\n";
      if (!text.empty()) {
        m += "--" + boundary + "\r\n";
        m += kText;
        AppendBase64Lines(m, text);
      }
      for (const Attachment& file : files) {
        m += "--" + boundary + "\r\n";
        m += "Content-Type: " + std::string(MimeTypeFor(file.file_name)) + "; " +
             FileNameParam("name", file.file_name) + "\r\n";
        m += "Content-Disposition: attachment; " + FileNameParam("filename", file.file_name) +
             "\r\n";
        m += "Content-Transfer-Encoding: base64\r\n\r\n";
        AppendBase64Lines(m, file.data);
      }
      m += "--" + boundary + "--\r\n";
    }
    net::MailRequest req;
    req.url = p_.base_url;
    req.username = p_.token.empty() ? "" : p_.username;
    req.password = p_.token;
    req.from = p_.from;
    req.recipients = {d.chat};
    req.message = std::move(m);
    req.allow_plaintext = p_.allow_plaintext;
    if (limits.deadline != Clock::time_point::max()) {
      const auto left =
          std::chrono::duration_cast<std::chrono::milliseconds>(limits.deadline - Clock::now());
      req.total_timeout = std::max(std::chrono::milliseconds(1), std::min(req.total_timeout, left));
    }
    const Status sent = net::SendMail(req, limits.stop);
    if (!sent.ok()) return Err(sent.WithContext("email not sent"));
    return message_id;
  }

 private:
  PlatformSettings p_;
};

}  // namespace

std::unique_ptr<Sender> MakeEmailSender(const PlatformSettings& p) {
  return std::make_unique<EmailSender>(p);
}

}  // namespace talaria::messaging
