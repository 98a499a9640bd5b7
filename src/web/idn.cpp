// HostToAscii (idn.h).
#include "web/idn.h"

#include <idn2.h>

#include <cstdlib>
#include <memory>

namespace talaria::web {
namespace {

struct FreeIdn2 {
  void operator()(char* p) const { idn2_free(p); }
};

Result<std::string> Convert(const std::string& host, int flags) {
  char* raw = nullptr;
  const int rc = idn2_to_ascii_8z(host.c_str(), &raw, flags);
  std::unique_ptr<char, FreeIdn2> out(raw);
  if (rc != IDN2_OK || out == nullptr) {
    return Err(InvalidArgumentError(std::string("not a valid internationalized host name (") +
                                    idn2_strerror(rc) + ")"));
  }
  return std::string(out.get());
}

}  // namespace

Result<std::string> HostToAscii(std::string_view host) {
  const std::string text(host);
  // Non-transitional first (what browsers use now); names only the old rules accept (e.g. with
  // a final sigma spelled the 2003 way) fall back to transitional, as curl does.
  auto converted = Convert(text, IDN2_NFC_INPUT | IDN2_NONTRANSITIONAL);
  if (!converted) converted = Convert(text, IDN2_NFC_INPUT | IDN2_TRANSITIONAL);
  return converted;
}

}  // namespace talaria::web
