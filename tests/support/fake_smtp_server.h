// A small SMTP server on 127.0.0.1 (port 0) for the e-mail tests: it speaks enough ESMTP for
// libcurl (EHLO, AUTH PLAIN, MAIL, RCPT, DATA, QUIT), checks the login against the one it was
// given, and records what each accepted message carried. It can refuse a recipient (550) to show
// the send failing. One connection at a time; every read is bounded (5 s) (loopback_accept_loop.h).
// Header-only; include it from test files only. Thread-safe accessors.
#pragma once

#include <unistd.h>

#include <atomic>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "loopback_accept_loop.h"

namespace talaria_test {

class FakeSmtpServer {
 public:
  struct Mail {
    std::string auth;  // "user\0password" decoded from AUTH PLAIN ("" without AUTH)
    std::string from;  // MAIL FROM address
    std::vector<std::string> to;
    std::string data;  // the message, dot-unstuffed, CRLF line ends
  };

  FakeSmtpServer(std::string user, std::string password, std::string refuse_rcpt = "")
      : user_(std::move(user)),
        password_(std::move(password)),
        refuse_rcpt_(std::move(refuse_rcpt)),
        loop_([this](int conn, int) { Session(conn); }, 4) {}

  std::string url() const { return "smtp://127.0.0.1:" + std::to_string(loop_.port()); }
  std::vector<Mail> mails() const {
    std::lock_guard lock(mu_);
    return mails_;
  }
  int failed_logins() const { return failed_logins_; }

 private:
  static std::string Decode64(const std::string& in) {
    auto val = [](char c) -> int {
      if (c >= 'A' && c <= 'Z') return c - 'A';
      if (c >= 'a' && c <= 'z') return c - 'a' + 26;
      if (c >= '0' && c <= '9') return c - '0' + 52;
      if (c == '+') return 62;
      if (c == '/') return 63;
      return -1;
    };
    std::string out;
    int bits = 0;
    unsigned acc = 0;
    for (char c : in) {
      const int v = val(c);
      if (v < 0) continue;
      acc = (acc << 6) | static_cast<unsigned>(v);
      bits += 6;
      if (bits >= 8) {
        bits -= 8;
        out += static_cast<char>((acc >> bits) & 0xFF);
      }
    }
    return out;
  }

  static std::string Address(const std::string& line) {
    const size_t lt = line.find('<');
    const size_t gt = line.find('>', lt);
    return lt == std::string::npos || gt == std::string::npos ? ""
                                                              : line.substr(lt + 1, gt - lt - 1);
  }

  // One line without its CRLF; false when the peer closed or a read timed out.
  bool ReadLine(int conn, std::string& buffer, std::string& line) {
    for (;;) {
      const size_t end = buffer.find("\r\n");
      if (end != std::string::npos) {
        line = buffer.substr(0, end);
        buffer.erase(0, end + 2);
        return true;
      }
      char buf[4096];
      const ssize_t n = ::read(conn, buf, sizeof(buf));
      if (n <= 0) return false;
      buffer.append(buf, static_cast<size_t>(n));
    }
  }

  static void Write(int conn, const std::string& s) { LoopbackAcceptLoop::WriteAll(conn, s); }

  void Session(int conn) {
    std::string buffer;
    std::string line;
    Mail mail;
    bool authed = false;
    Write(conn, "220 fake-smtp ESMTP ready\r\n");
    while (ReadLine(conn, buffer, line)) {
      const std::string verb = line.substr(0, line.find(' '));
      if (verb == "EHLO" || verb == "HELO") {
        Write(conn, "250-fake-smtp\r\n250-AUTH PLAIN\r\n250 8BITMIME\r\n");
      } else if (verb == "AUTH") {
        std::string response = line.size() > 11 ? line.substr(11) : "";  // "AUTH PLAIN x"
        if (response.empty()) {
          Write(conn, "334 \r\n");
          if (!ReadLine(conn, buffer, response)) return;
        }
        mail.auth = Decode64(response);
        const std::string want = std::string(1, '\0') + user_ + std::string(1, '\0') + password_;
        if (mail.auth == want || mail.auth == user_ + want) {
          authed = true;
          Write(conn, "235 2.7.0 Authentication successful\r\n");
        } else {
          ++failed_logins_;
          Write(conn, "535 5.7.8 Authentication credentials invalid\r\n");
        }
      } else if (verb == "MAIL") {
        if (!user_.empty() && !authed) {
          Write(conn, "530 5.7.0 Authentication required\r\n");
          continue;
        }
        mail.from = Address(line);
        Write(conn, "250 OK\r\n");
      } else if (verb == "RCPT") {
        const std::string to = Address(line);
        if (!refuse_rcpt_.empty() && to == refuse_rcpt_) {
          Write(conn, "550 5.1.1 No such user\r\n");
          continue;
        }
        mail.to.push_back(to);
        Write(conn, "250 OK\r\n");
      } else if (verb == "DATA") {
        Write(conn, "354 End data with <CR><LF>.<CR><LF>\r\n");
        std::string data;
        while (ReadLine(conn, buffer, line) && line != ".") {
          if (line.starts_with("..")) line.erase(0, 1);
          data += line + "\r\n";
        }
        mail.data = data;
        {
          std::lock_guard lock(mu_);
          mails_.push_back(mail);
        }
        Write(conn, "250 2.0.0 queued as FAKE1\r\n");
      } else if (verb == "QUIT") {
        Write(conn, "221 bye\r\n");
        return;
      } else if (verb == "RSET" || verb == "NOOP") {
        Write(conn, "250 OK\r\n");
      } else {
        Write(conn, "502 5.5.2 not implemented\r\n");
      }
    }
  }

  std::string user_;
  std::string password_;
  std::string refuse_rcpt_;
  std::atomic<int> failed_logins_{0};
  mutable std::mutex mu_;
  std::vector<Mail> mails_;  // Guarded by mu_.
  LoopbackAcceptLoop loop_;  // last: serves once everything else is there, stops first
};

}  // namespace talaria_test
