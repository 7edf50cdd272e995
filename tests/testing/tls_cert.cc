#include "testing/tls_cert.h"

#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/rand.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>

#include <cstdio>
#include <memory>

namespace millrace::testing {
namespace {

struct OpenSslFree {
  void operator()(EVP_PKEY* key) const { EVP_PKEY_free(key); }
  void operator()(X509* cert) const { X509_free(cert); }
  void operator()(X509_EXTENSION* ext) const { X509_EXTENSION_free(ext); }
  void operator()(std::FILE* file) const { std::fclose(file); }
};
template <typename T>
using Owned = std::unique_ptr<T, OpenSslFree>;

Status AddExtension(X509* cert, int nid, const char* value) {
  X509V3_CTX ctx;
  X509V3_set_ctx_nodb(&ctx);
  X509V3_set_ctx(&ctx, cert, cert, nullptr, nullptr, 0);
  Owned<X509_EXTENSION> ext(X509V3_EXT_conf_nid(nullptr, &ctx, nid, value));
  if (ext == nullptr || X509_add_ext(cert, ext.get(), -1) != 1) {
    return Status::Internal(std::string("cannot add the extension ") + value);
  }
  return Status::Ok();
}

// Writes `write(file)` to `path`.
template <typename Write>
Status WritePem(const std::string& path, Write write) {
  Owned<std::FILE> file(std::fopen(path.c_str(), "wb"));
  if (file == nullptr || write(file.get()) != 1) return Status::IoError("cannot write " + path);
  return Status::Ok();
}

}  // namespace

Result<TestCertificate> MakeSelfSignedCertificate(const std::string& dir, const std::string& name) {
  Owned<EVP_PKEY> key(EVP_PKEY_Q_keygen(nullptr, nullptr, "EC", "P-256"));
  Owned<X509> cert(X509_new());
  if (key == nullptr || cert == nullptr) return Status::Internal("cannot make a key");
  unsigned char serial[8];
  RAND_bytes(serial, sizeof(serial));
  serial[0] &= 0x7f;                // positive
  X509_set_version(cert.get(), 2);  // v3
  BIGNUM* serial_bn = BN_bin2bn(serial, sizeof(serial), nullptr);
  BN_to_ASN1_INTEGER(serial_bn, X509_get_serialNumber(cert.get()));
  BN_free(serial_bn);
  X509_gmtime_adj(X509_getm_notBefore(cert.get()), -3600);
  X509_gmtime_adj(X509_getm_notAfter(cert.get()), 24 * 3600);
  X509_set_pubkey(cert.get(), key.get());
  X509_NAME* subject = X509_get_subject_name(cert.get());
  X509_NAME_add_entry_by_txt(subject, "CN", MBSTRING_ASC,
                             reinterpret_cast<const unsigned char*>("localhost"), -1, -1, 0);
  X509_set_issuer_name(cert.get(), subject);
  MR_RETURN_IF_ERROR(AddExtension(cert.get(), NID_basic_constraints, "critical,CA:TRUE"));
  MR_RETURN_IF_ERROR(AddExtension(cert.get(), NID_subject_alt_name, "DNS:localhost,IP:127.0.0.1"));
  MR_RETURN_IF_ERROR(AddExtension(cert.get(), NID_subject_key_identifier, "hash"));
  if (X509_sign(cert.get(), key.get(), EVP_sha256()) == 0) {
    return Status::Internal("cannot sign the certificate");
  }
  TestCertificate out{dir + "/" + name + ".crt", dir + "/" + name + ".key"};
  MR_RETURN_IF_ERROR(
      WritePem(out.cert_file, [&](std::FILE* file) { return PEM_write_X509(file, cert.get()); }));
  MR_RETURN_IF_ERROR(WritePem(out.key_file, [&](std::FILE* file) {
    return PEM_write_PrivateKey(file, key.get(), nullptr, nullptr, 0, nullptr, nullptr);
  }));
  return out;
}

}  // namespace millrace::testing
