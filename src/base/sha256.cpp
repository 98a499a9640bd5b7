// Through nettle rather than libcrypto: libcrypto's ~21,000 relocations were the largest part
// of the dynamic loader's work at every start of talaria; nettle has ~700.
#include "talaria/base/sha256.h"

#include <nettle/sha2.h>

#include "talaria/base/status.h"

namespace talaria {
namespace {

std::string ToHex(const uint8_t* data, size_t n) {
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out(n * 2, '0');
  for (size_t i = 0; i < n; ++i) {
    out[2 * i] = kDigits[data[i] >> 4];
    out[2 * i + 1] = kDigits[data[i] & 0xf];
  }
  return out;
}

}  // namespace

struct Sha256::Impl {
  sha256_ctx ctx;
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) { sha256_init(&impl_->ctx); }

Sha256::~Sha256() = default;

void Sha256::Update(std::string_view data) {
  sha256_update(&impl_->ctx, data.size(), reinterpret_cast<const uint8_t*>(data.data()));
}

std::array<uint8_t, 32> Sha256::Final() {
  std::array<uint8_t, 32> out{};
  sha256_digest(&impl_->ctx, out.size(), out.data());  // also resets the context
  return out;
}

std::string Sha256::FinalHex() {
  auto d = Final();
  return ToHex(d.data(), d.size());
}

std::string Sha256Hex(std::string_view data) {
  sha256_ctx ctx;  // on the stack: one hash needs no Sha256 object and its heap state
  sha256_init(&ctx);
  sha256_update(&ctx, data.size(), reinterpret_cast<const uint8_t*>(data.data()));
  std::array<uint8_t, 32> digest{};
  sha256_digest(&ctx, digest.size(), digest.data());
  return ToHex(digest.data(), digest.size());
}

}  // namespace talaria
