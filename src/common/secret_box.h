// Secrets at rest: AES-256-GCM under a key kept in a file of the data directory.
//
// What is sealed can be read back only with the same key file: a copy of the database alone
// (a backup, a stolen disk image of the database file) does not give the secrets it holds.
// The operator, who can read the data directory, can; that is out of scope (docs/security.md).
//
// Contract
// - OpenOrCreate reads the key file at `path` (32 bytes), or, when there is none, creates it
//   with 32 bytes from OpenSSL's RAND_bytes, mode 0600, O_EXCL (two servers starting at once
//   do not write two keys) and fsynced with its directory. A key file of another size is
//   DATA_LOSS naming it; one that group or others may read is PERMISSION_DENIED naming it and
//   the chmod that fixes it (the key guards every secret).
// - Seal(plain) returns "mrsec1:" and the base64 of a fresh 12-byte nonce, the ciphertext and
//   the 16-byte tag: sealing the same text twice gives two different strings.
// - Unseal reverses Seal. Text that is not sealed, or sealed under another key, or altered, is
//   DATA_LOSS saying which (the key file in error messages, never the key or the text).
// - IsSealed tells sealed text from clear text (the catalog upgrade seals what is not).
// - Thread-safety: a SecretBox is immutable once made; Seal and Unseal may run concurrently.
#pragma once

#include <memory>
#include <string>
#include <string_view>

#include "common/result.h"

namespace millrace {

class SecretBox {
 public:
  static constexpr size_t kKeyBytes = 32;

  static Result<std::unique_ptr<SecretBox>> OpenOrCreate(const std::string& path);
  // A box with `key` (kKeyBytes), for tests; `where` names it in errors.
  static std::unique_ptr<SecretBox> WithKey(std::string key, std::string where = "test key");

  Result<std::string> Seal(std::string_view plain) const;
  Result<std::string> Unseal(std::string_view sealed) const;
  static bool IsSealed(std::string_view text);

 private:
  SecretBox(std::string key, std::string where) : key_(std::move(key)), where_(std::move(where)) {}
  const std::string key_;
  const std::string where_;
};

}  // namespace millrace
