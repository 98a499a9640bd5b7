#include "talaria/safety/sha256.h"

#include <openssl/evp.h>

#include "talaria/base/status.h"

namespace talaria::safety {
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
  EVP_MD_CTX* ctx = nullptr;
  ~Impl() { EVP_MD_CTX_free(ctx); }
};

Sha256::Sha256() : impl_(std::make_unique<Impl>()) {
  impl_->ctx = EVP_MD_CTX_new();
  TALARIA_CHECK(impl_->ctx != nullptr);
  TALARIA_CHECK(EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) == 1);
}

Sha256::~Sha256() = default;

void Sha256::Update(std::string_view data) {
  TALARIA_CHECK(EVP_DigestUpdate(impl_->ctx, data.data(), data.size()) == 1);
}

std::array<uint8_t, 32> Sha256::Final() {
  std::array<uint8_t, 32> out{};
  unsigned int len = 0;
  TALARIA_CHECK(EVP_DigestFinal_ex(impl_->ctx, out.data(), &len) == 1 && len == out.size());
  TALARIA_CHECK(EVP_DigestInit_ex(impl_->ctx, EVP_sha256(), nullptr) == 1);
  return out;
}

std::string Sha256::FinalHex() {
  auto d = Final();
  return ToHex(d.data(), d.size());
}

std::string Sha256Hex(std::string_view data) {
  uint8_t out[32];
  unsigned int len = 0;
  TALARIA_CHECK(EVP_Digest(data.data(), data.size(), out, &len, EVP_sha256(), nullptr) == 1 &&
                len == sizeof(out));
  return ToHex(out, sizeof(out));
}

}  // namespace talaria::safety
