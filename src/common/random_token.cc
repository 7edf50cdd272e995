#include "common/random_token.h"

#include <openssl/crypto.h>
#include <openssl/rand.h>

#include <cstdlib>
#include <vector>

#include "common/logging.h"

namespace millrace {

std::string RandomToken(size_t bytes) {
  std::vector<unsigned char> buffer(bytes);
  if (RAND_bytes(buffer.data(), static_cast<int>(buffer.size())) != 1) {
    MR_LOG(kError) << "RAND_bytes failed: no source of random bytes; stopping";
    std::abort();
  }
  static constexpr char kDigits[] = "0123456789abcdef";
  std::string out;
  out.reserve(bytes * 2);
  for (unsigned char b : buffer) {
    out.push_back(kDigits[b >> 4]);
    out.push_back(kDigits[b & 0xf]);
  }
  return out;
}

bool TokensEqual(std::string_view a, std::string_view b) {
  return a.size() == b.size() && CRYPTO_memcmp(a.data(), b.data(), a.size()) == 0;
}

}  // namespace millrace
