// Test support: TLS certificates made at run time with OpenSSL's API, so no test depends on
// the `openssl` command or on a key checked into the tree.
//
// Contract
// - MakeSelfSignedCertificate writes <dir>/<name>.crt and <dir>/<name>.key (PEM): a fresh
//   P-256 key and a self-signed certificate for CN=localhost with the subject alternative
//   names DNS:localhost and IP:127.0.0.1, valid from an hour ago for a day. The certificate is
//   its own CA: a client that trusts <name>.crt verifies the server, host name included.
// - Each call makes a new key, so two certificates never share one (a mismatched pair is
//   one's .crt with the other's .key).
#pragma once

#include <string>

#include "common/result.h"

namespace millrace::testing {

struct TestCertificate {
  std::string cert_file;
  std::string key_file;
};

Result<TestCertificate> MakeSelfSignedCertificate(const std::string& dir,
                                                  const std::string& name = "server");

}  // namespace millrace::testing
