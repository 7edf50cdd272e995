#include "common/tls.h"

#include <gtest/gtest.h>
#include <openssl/pem.h>
#include <openssl/ssl.h>

#include <cstdio>
#include <fstream>

#include "common/server_config.h"
#include "testing/temp_dir.h"
#include "testing/tls_cert.h"

namespace millrace {
namespace {

class TlsCredentialsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto cert = testing::MakeSelfSignedCertificate(dir_.path());
    ASSERT_TRUE(cert.ok()) << cert.status().ToString();
    cert_ = *cert;
  }

  std::string Write(const std::string& name, const std::string& text) {
    const std::string path = dir_.Join(name);
    std::ofstream(path) << text;
    return path;
  }

  // The error of loading `cert` and `key`; "" when they load.
  static std::string LoadError(const std::string& cert, const std::string& key) {
    auto loaded = TlsCredentials::Load(cert, key);
    return loaded.ok() ? "" : loaded.status().message();
  }

  testing::TempDir dir_;
  testing::TestCertificate cert_;
};

TEST_F(TlsCredentialsTest, AMatchingPairLoadsAndConfiguresAServerContext) {
  auto loaded = TlsCredentials::Load(cert_.cert_file, cert_.key_file);
  ASSERT_TRUE(loaded.ok()) << loaded.status().ToString();
  EXPECT_EQ((*loaded)->cert_file(), cert_.cert_file);
  SSL_CTX* ctx = SSL_CTX_new(TLS_server_method());
  ASSERT_NE(ctx, nullptr);
  EXPECT_TRUE((*loaded)->ConfigureServer(ctx).ok());
  EXPECT_EQ(SSL_CTX_get_min_proto_version(ctx), TLS1_2_VERSION);
  EXPECT_NE(SSL_CTX_get0_certificate(ctx), nullptr);
  SSL_CTX_free(ctx);
}

TEST_F(TlsCredentialsTest, OneFileWithCertificateAndKeyServesAsBoth) {
  std::ifstream cert(cert_.cert_file), key(cert_.key_file);
  std::string both((std::istreambuf_iterator<char>(key)), {});
  both.append(std::istreambuf_iterator<char>(cert), {});
  const std::string path = Write("both.pem", both);
  EXPECT_EQ(LoadError(path, path), "");
}

TEST_F(TlsCredentialsTest, AMissingFileIsNamedWithTheSystemError) {
  const std::string missing = dir_.Join("nope.crt");
  EXPECT_EQ(LoadError(missing, cert_.key_file),
            "cannot read TLS certificate file '" + missing + "': No such file or directory");
  EXPECT_EQ(LoadError(cert_.cert_file, missing),
            "cannot read TLS key file '" + missing + "': No such file or directory");
  EXPECT_EQ(LoadError(dir_.path(), cert_.key_file),
            "cannot read TLS certificate file '" + dir_.path() + "': Is a directory");
}

TEST_F(TlsCredentialsTest, AFileWithoutPemIsRefused) {
  const std::string garbage = Write("garbage.pem", "this is not a certificate\n");
  EXPECT_EQ(LoadError(garbage, cert_.key_file),
            "TLS certificate file '" + garbage + "' holds no PEM certificate");
  EXPECT_EQ(LoadError(cert_.cert_file, garbage),
            "TLS key file '" + garbage + "' holds no PEM private key");
  // The files swapped: a key is no certificate, a certificate no key.
  EXPECT_NE(LoadError(cert_.key_file, cert_.cert_file).find("holds no PEM certificate"),
            std::string::npos);
}

TEST_F(TlsCredentialsTest, AKeyOfAnotherCertificateIsRefused) {
  auto other = testing::MakeSelfSignedCertificate(dir_.path(), "other");
  ASSERT_TRUE(other.ok());
  EXPECT_EQ(LoadError(cert_.cert_file, other->key_file),
            "TLS key file '" + other->key_file + "' does not match the certificate in '" +
                cert_.cert_file + "'");
}

TEST_F(TlsCredentialsTest, AnEncryptedKeyIsRefusedWithoutPrompting) {
  std::FILE* in = std::fopen(cert_.key_file.c_str(), "r");
  ASSERT_NE(in, nullptr);
  EVP_PKEY* key = PEM_read_PrivateKey(in, nullptr, nullptr, nullptr);
  std::fclose(in);
  ASSERT_NE(key, nullptr);
  const std::string encrypted = dir_.Join("encrypted.key");
  std::FILE* out = std::fopen(encrypted.c_str(), "w");
  ASSERT_NE(out, nullptr);
  char passphrase[] = "secret";
  EXPECT_EQ(PEM_write_PrivateKey(out, key, EVP_aes_256_cbc(), nullptr, 0, nullptr, passphrase), 1);
  std::fclose(out);
  EVP_PKEY_free(key);
  EXPECT_EQ(
      LoadError(cert_.cert_file, encrypted),
      "TLS key file '" + encrypted + "' holds an encrypted private key: it must be unencrypted");
}

TEST(TlsFlagsTest, CertificateAndKeyGoTogether) {
  const EnvLookup env = [](std::string_view) -> std::optional<std::string> { return std::nullopt; };
  auto config_of = [&](std::vector<std::string> args) {
    auto flags = ParseFlags(args, ServerConfig::Flags(), env);
    EXPECT_TRUE(flags.ok());
    return ServerConfig::FromFlags(*flags, env);
  };
  auto both = config_of({"--tls-cert", "c.pem", "--tls-key", "k.pem"});
  ASSERT_TRUE(both.ok()) << both.status().ToString();
  EXPECT_EQ(both->tls_cert_file, "c.pem");
  EXPECT_EQ(both->tls_key_file, "k.pem");
  EXPECT_TRUE(config_of({}).ok());
  for (auto args : {std::vector<std::string>{"--tls-cert", "c.pem"},
                    std::vector<std::string>{"--tls-key", "k.pem"}}) {
    auto half = config_of(args);
    ASSERT_FALSE(half.ok());
    EXPECT_EQ(half.status().message(),
              "--tls-cert and --tls-key go together: give both or neither");
  }
  const EnvLookup tls_env = [](std::string_view name) -> std::optional<std::string> {
    if (name == "MILLRACE_TLS_CERT") return "env.crt";
    if (name == "MILLRACE_TLS_KEY") return "env.key";
    return std::nullopt;
  };
  auto flags = ParseFlags({}, ServerConfig::Flags(), tls_env);
  ASSERT_TRUE(flags.ok());
  auto from_env = ServerConfig::FromFlags(*flags, tls_env);
  ASSERT_TRUE(from_env.ok());
  EXPECT_EQ(from_env->tls_cert_file, "env.crt");
  EXPECT_EQ(from_env->tls_key_file, "env.key");
}

}  // namespace
}  // namespace millrace
