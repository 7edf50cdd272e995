#include "common/tls.h"

#include <openssl/err.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

#include <cerrno>
#include <cstdio>
#include <cstring>

#include "common/logging.h"

namespace millrace {
namespace {

// The reason of OpenSSL's first queued error ("ee key too small"); clears the queue.
std::string OpenSslReason() {
  const unsigned long code = ERR_get_error();
  const char* reason = code != 0 ? ERR_reason_error_string(code) : nullptr;
  ERR_clear_error();
  return reason != nullptr ? reason : "unknown OpenSSL error";
}

Result<std::string> ReadWholeFile(const std::string& path, const std::string& what) {
  auto failure = [&](int error) {
    return Status::IoError("cannot read " + what + " '" + path + "': " + std::strerror(error));
  };
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) return failure(errno);
  std::string data;
  char buffer[16384];
  size_t n = 0;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0)
    data.append(buffer, n);
  const int error = std::ferror(file) != 0 ? errno : 0;
  std::fclose(file);
  if (error != 0) return failure(error);
  return data;
}

struct BioCloser {
  void operator()(BIO* bio) const { BIO_free(bio); }
};
using BioPtr = std::unique_ptr<BIO, BioCloser>;

BioPtr MemoryBio(const std::string& data) {
  return BioPtr(BIO_new_mem_buf(data.data(), static_cast<int>(data.size())));
}

// An encrypted key fails to load instead of prompting for a passphrase on the terminal; the
// bool that `asked` points to records that a passphrase was wanted.
int NoPassphrase(char*, int, int, void* asked) {
  *static_cast<bool*>(asked) = true;
  return -1;
}

}  // namespace

Result<std::shared_ptr<const TlsCredentials>> TlsCredentials::Load(const std::string& cert_file,
                                                                   const std::string& key_file) {
  std::shared_ptr<TlsCredentials> credentials(new TlsCredentials());
  credentials->cert_file_ = cert_file;
  MR_ASSIGN_OR_RETURN(const std::string cert_pem, ReadWholeFile(cert_file, "TLS certificate file"));
  MR_ASSIGN_OR_RETURN(const std::string key_pem, ReadWholeFile(key_file, "TLS key file"));

  bool encrypted = false;
  BioPtr certs = MemoryBio(cert_pem);
  credentials->cert_ = PEM_read_bio_X509(certs.get(), nullptr, NoPassphrase, &encrypted);
  if (credentials->cert_ == nullptr) {
    ERR_clear_error();
    return Status::InvalidArgument("TLS certificate file '" + cert_file +
                                   "' holds no PEM certificate");
  }
  while (X509* intermediate = PEM_read_bio_X509(certs.get(), nullptr, NoPassphrase, &encrypted))
    credentials->chain_.push_back(intermediate);
  ERR_clear_error();  // the end of the file reads as an error

  BioPtr key = MemoryBio(key_pem);
  credentials->key_ = PEM_read_bio_PrivateKey(key.get(), nullptr, NoPassphrase, &encrypted);
  if (credentials->key_ == nullptr) {
    ERR_clear_error();
    return Status::InvalidArgument(
        "TLS key file '" + key_file + "' holds " +
        (encrypted ? "an encrypted private key: it must be unencrypted" : "no PEM private key"));
  }
  if (X509_check_private_key(credentials->cert_, credentials->key_) != 1) {
    ERR_clear_error();
    return Status::InvalidArgument("TLS key file '" + key_file +
                                   "' does not match the certificate in '" + cert_file + "'");
  }

  // What each server does at start, once now: OpenSSL may still refuse the certificate.
  SSL_CTX* trial = SSL_CTX_new(TLS_server_method());
  if (trial == nullptr) return Status::Internal("cannot create a TLS context: " + OpenSslReason());
  const Status configured = credentials->ConfigureServer(trial);
  SSL_CTX_free(trial);
  if (!configured.ok()) {
    return Status::InvalidArgument("TLS certificate file '" + cert_file +
                                   "': " + configured.message());
  }
  if (X509_cmp_current_time(X509_get0_notAfter(credentials->cert_)) < 0) {
    MR_LOG(kWarning) << "the certificate in TLS certificate file '" << cert_file
                     << "' has expired: clients that verify it will refuse to connect";
  }
  return std::shared_ptr<const TlsCredentials>(std::move(credentials));
}

TlsCredentials::~TlsCredentials() {
  X509_free(cert_);
  for (X509* intermediate : chain_)
    X509_free(intermediate);
  EVP_PKEY_free(key_);
}

Status TlsCredentials::ConfigureServer(SSL_CTX* ctx) const {
  SSL_CTX_set_min_proto_version(ctx, TLS1_2_VERSION);
  SSL_CTX_set_options(ctx, SSL_OP_NO_RENEGOTIATION | SSL_OP_CIPHER_SERVER_PREFERENCE);
  if (SSL_CTX_use_certificate(ctx, cert_) != 1) {
    return Status::InvalidArgument("the certificate is refused: " + OpenSslReason());
  }
  for (X509* intermediate : chain_) {
    if (SSL_CTX_add1_chain_cert(ctx, intermediate) != 1) {
      return Status::InvalidArgument("a chain certificate is refused: " + OpenSslReason());
    }
  }
  if (SSL_CTX_use_PrivateKey(ctx, key_) != 1 || SSL_CTX_check_private_key(ctx) != 1) {
    return Status::InvalidArgument("the private key is refused: " + OpenSslReason());
  }
  return Status::Ok();
}

}  // namespace millrace
