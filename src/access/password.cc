#include "access/password.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>

#include <array>

namespace millrace::access {
namespace {

using Sha1Digest = std::array<unsigned char, kNativeHashLength>;

// SHA1 of `a` followed by `b`.
Sha1Digest Sha1(std::string_view a, std::string_view b = {}) {
  Sha1Digest digest{};
  EVP_MD_CTX* ctx = EVP_MD_CTX_new();
  EVP_DigestInit_ex(ctx, EVP_sha1(), nullptr);
  EVP_DigestUpdate(ctx, a.data(), a.size());
  EVP_DigestUpdate(ctx, b.data(), b.size());
  unsigned int length = 0;
  EVP_DigestFinal_ex(ctx, digest.data(), &length);
  EVP_MD_CTX_free(ctx);
  return digest;
}

std::string_view AsView(const Sha1Digest& d) {
  return {reinterpret_cast<const char*>(d.data()), d.size()};
}

int HexValue(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

}  // namespace

std::string NativePasswordHash(std::string_view password) {
  if (password.empty()) return "";
  return std::string(AsView(Sha1(AsView(Sha1(password)))));
}

std::string NativeHashText(std::string_view hash) {
  if (hash.empty()) return "";
  static constexpr char kHex[] = "0123456789ABCDEF";
  std::string text = "*";
  for (char c : hash) {
    const auto byte = static_cast<unsigned char>(c);
    text += kHex[byte >> 4];
    text += kHex[byte & 0xf];
  }
  return text;
}

Result<std::string> ParseNativeHashText(std::string_view text) {
  if (text.empty()) return std::string();
  if (text.size() != 1 + 2 * kNativeHashLength || text[0] != '*') {
    return Status::InvalidArgument(
        "a password hash is '*' and 40 hexadecimal digits (mysql_native_password)");
  }
  std::string hash(kNativeHashLength, '\0');
  for (size_t i = 0; i < kNativeHashLength; ++i) {
    const int high = HexValue(text[1 + 2 * i]);
    const int low = HexValue(text[2 + 2 * i]);
    if (high < 0 || low < 0) {
      return Status::InvalidArgument(
          "a password hash is '*' and 40 hexadecimal digits (mysql_native_password)");
    }
    hash[i] = static_cast<char>(high << 4 | low);
  }
  return hash;
}

std::string NativePasswordResponse(std::string_view password, std::string_view scramble) {
  if (password.empty()) return "";
  const Sha1Digest stage1 = Sha1(password);
  const Sha1Digest stage2 = Sha1(AsView(stage1));
  const Sha1Digest mask = Sha1(scramble, AsView(stage2));
  std::string out(stage1.size(), '\0');
  for (size_t i = 0; i < out.size(); ++i)
    out[i] = static_cast<char>(stage1[i] ^ mask[i]);
  return out;
}

bool VerifyNativeResponse(std::string_view stored_hash, std::string_view scramble,
                          std::string_view response) {
  if (stored_hash.empty() || response.empty()) return stored_hash.empty() && response.empty();
  if (stored_hash.size() != kNativeHashLength || response.size() != kNativeHashLength) {
    return false;
  }
  // response = SHA1(pw) XOR SHA1(scramble + stored): undo the mask to get SHA1(pw) back.
  const Sha1Digest mask = Sha1(scramble, stored_hash);
  std::string stage1(kNativeHashLength, '\0');
  for (size_t i = 0; i < kNativeHashLength; ++i)
    stage1[i] = static_cast<char>(static_cast<unsigned char>(response[i]) ^ mask[i]);
  const Sha1Digest stage2 = Sha1(stage1);
  return CRYPTO_memcmp(stage2.data(), stored_hash.data(), kNativeHashLength) == 0;
}

bool VerifyPassword(std::string_view stored_hash, std::string_view password) {
  const std::string hash = NativePasswordHash(password);
  if (hash.size() != stored_hash.size()) return false;
  return CRYPTO_memcmp(hash.data(), stored_hash.data(), hash.size()) == 0;
}

}  // namespace millrace::access
