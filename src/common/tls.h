// TlsCredentials: the certificate (with its chain) and private key that TLS on the MySQL and
// HTTP ports presents (--tls-cert, --tls-key), read once at start-up.
//
// Contract
// - Load reads both PEM files and checks them by configuring a throwaway server context: a
//   missing or unreadable file, a file holding no certificate (or no private key, or an
//   encrypted one: there is no passphrase prompt), a certificate OpenSSL refuses (a key too
//   weak for its security level) or a key that is not the certificate's is an error whose
//   one-line message names the file and what is wrong. A certificate past its validity is
//   loaded with a warning in the log (clients that verify it will refuse it).
// - ConfigureServer installs the credentials in a server SSL_CTX (each server owns its
//   context: asio's for MySQL, cpp-httplib's for HTTP) with Millrace's TLS settings: TLS 1.2
//   or later, no renegotiation, the server's cipher preference.
// - Immutable after Load: thread-safe, shared by both servers.
#pragma once

#include <openssl/types.h>

#include <memory>
#include <string>
#include <vector>

#include "common/result.h"

namespace millrace {

class TlsCredentials {
 public:
  static Result<std::shared_ptr<const TlsCredentials>> Load(const std::string& cert_file,
                                                            const std::string& key_file);
  ~TlsCredentials();
  TlsCredentials(const TlsCredentials&) = delete;
  TlsCredentials& operator=(const TlsCredentials&) = delete;

  Status ConfigureServer(SSL_CTX* ctx) const;
  const std::string& cert_file() const { return cert_file_; }

 private:
  TlsCredentials() = default;

  std::string cert_file_;
  X509* cert_ = nullptr;
  std::vector<X509*> chain_;  // intermediates after the certificate in its file
  EVP_PKEY* key_ = nullptr;
};

}  // namespace millrace
