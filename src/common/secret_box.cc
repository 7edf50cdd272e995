#include "common/secret_box.h"

#include <fcntl.h>
#include <openssl/evp.h>
#include <openssl/rand.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <memory>
#include <optional>
#include <vector>

#include "common/logging.h"

namespace millrace {
namespace {

constexpr std::string_view kPrefix = "mrsec1:";
constexpr int kNonceBytes = 12;
constexpr int kTagBytes = 16;

struct CipherDeleter {
  void operator()(EVP_CIPHER_CTX* ctx) const { EVP_CIPHER_CTX_free(ctx); }
};
using Cipher = std::unique_ptr<EVP_CIPHER_CTX, CipherDeleter>;

std::string Base64(std::string_view bytes) {
  std::string out(4 * ((bytes.size() + 2) / 3), '\0');
  const int n = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(bytes.data()),
                                static_cast<int>(bytes.size()));
  out.resize(static_cast<size_t>(n));
  return out;
}

std::optional<std::string> FromBase64(std::string_view text) {
  if (text.size() % 4 != 0) return std::nullopt;
  std::string out(3 * text.size() / 4, '\0');
  const int n = EVP_DecodeBlock(reinterpret_cast<unsigned char*>(out.data()),
                                reinterpret_cast<const unsigned char*>(text.data()),
                                static_cast<int>(text.size()));
  if (n < 0) return std::nullopt;
  // EVP_DecodeBlock counts the padding as zero bytes.
  size_t padding = 0;
  for (size_t i = text.size(); i > 0 && text[i - 1] == '='; --i)
    ++padding;
  out.resize(static_cast<size_t>(n) - padding);
  return out;
}

Status SyncDirectoryOf(const std::string& path) {
  const std::string dir = std::filesystem::path(path).parent_path().string();
  const int fd = ::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY);
  if (fd < 0) return Status::IoError("cannot open " + dir + ": " + std::strerror(errno));
  const int synced = ::fsync(fd);
  ::close(fd);
  if (synced != 0) return Status::IoError("cannot sync " + dir + ": " + std::strerror(errno));
  return Status::Ok();
}

Result<std::string> CreateKey(const std::string& path) {
  std::string key(SecretBox::kKeyBytes, '\0');
  if (RAND_bytes(reinterpret_cast<unsigned char*>(key.data()), static_cast<int>(key.size())) != 1) {
    return Status::Internal("cannot draw a random key for " + path);
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) {
    return Status::IoError("cannot create the key file " + path + ": " + std::strerror(errno));
  }
  const ssize_t written = ::write(fd, key.data(), key.size());
  const bool synced = ::fsync(fd) == 0;
  ::close(fd);
  if (written != static_cast<ssize_t>(key.size()) || !synced) {
    ::unlink(path.c_str());
    return Status::IoError("cannot write the key file " + path);
  }
  MR_RETURN_IF_ERROR(SyncDirectoryOf(path));
  return key;
}

}  // namespace

Result<std::unique_ptr<SecretBox>> SecretBox::OpenOrCreate(const std::string& path) {
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0 && errno == ENOENT) {
    auto created = CreateKey(path);
    // Another process may have created it first: read the one that won.
    if (created.ok()) {
      MR_LOG(kInfo) << "created " << path
                    << ", the key that seals the jobs' credentials: keep a copy of it apart "
                       "from the database";
      return WithKey(std::move(created).value(), path);
    }
    if (::access(path.c_str(), F_OK) != 0) return created.status();
    return OpenOrCreate(path);
  }
  if (fd < 0)
    return Status::IoError("cannot open the key file " + path + ": " + std::strerror(errno));
  struct stat st {};
  std::string key(kKeyBytes + 1, '\0');
  const bool stated = ::fstat(fd, &st) == 0;
  const ssize_t got = ::read(fd, key.data(), key.size());
  ::close(fd);
  if (!stated || got < 0) return Status::IoError("cannot read the key file " + path);
  if ((st.st_mode & 077) != 0) {
    return Status::PermissionDenied("the key file " + path +
                                    " may be read by other users; it guards every stored "
                                    "secret: chmod 600 " +
                                    path);
  }
  if (got != static_cast<ssize_t>(kKeyBytes)) {
    return Status::DataLoss("the key file " + path + " holds " + std::to_string(got) +
                            " bytes, not " + std::to_string(kKeyBytes));
  }
  key.resize(kKeyBytes);
  return WithKey(std::move(key), path);
}

std::unique_ptr<SecretBox> SecretBox::WithKey(std::string key, std::string where) {
  return std::unique_ptr<SecretBox>(new SecretBox(std::move(key), std::move(where)));
}

bool SecretBox::IsSealed(std::string_view text) {
  return text.starts_with(kPrefix);
}

Result<std::string> SecretBox::Seal(std::string_view plain) const {
  std::string sealed(kNonceBytes + plain.size() + kTagBytes, '\0');
  auto* out = reinterpret_cast<unsigned char*>(sealed.data());
  if (RAND_bytes(out, kNonceBytes) != 1) return Status::Internal("cannot draw a nonce");
  Cipher ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  if (ctx == nullptr ||
      EVP_EncryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(key_.data()), out) != 1 ||
      EVP_EncryptUpdate(ctx.get(), out + kNonceBytes, &len,
                        reinterpret_cast<const unsigned char*>(plain.data()),
                        static_cast<int>(plain.size())) != 1 ||
      EVP_EncryptFinal_ex(ctx.get(), out + kNonceBytes + len, &len) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_GET_TAG, kTagBytes,
                          out + kNonceBytes + plain.size()) != 1) {
    return Status::Internal("cannot seal a secret with " + where_);
  }
  return std::string(kPrefix) + Base64(sealed);
}

Result<std::string> SecretBox::Unseal(std::string_view sealed) const {
  if (!IsSealed(sealed)) return Status::DataLoss("a stored secret is not sealed");
  const std::optional<std::string> bytes = FromBase64(sealed.substr(kPrefix.size()));
  if (!bytes || bytes->size() < static_cast<size_t>(kNonceBytes + kTagBytes)) {
    return Status::DataLoss("a stored secret is damaged (not what Seal wrote)");
  }
  const size_t text = bytes->size() - kNonceBytes - kTagBytes;
  const auto* in = reinterpret_cast<const unsigned char*>(bytes->data());
  std::string plain(text, '\0');
  auto* out = reinterpret_cast<unsigned char*>(plain.data());
  std::vector<unsigned char> tag(in + kNonceBytes + text, in + bytes->size());
  Cipher ctx(EVP_CIPHER_CTX_new());
  int len = 0;
  if (ctx == nullptr ||
      EVP_DecryptInit_ex(ctx.get(), EVP_aes_256_gcm(), nullptr,
                         reinterpret_cast<const unsigned char*>(key_.data()), in) != 1 ||
      EVP_DecryptUpdate(ctx.get(), out, &len, in + kNonceBytes, static_cast<int>(text)) != 1 ||
      EVP_CIPHER_CTX_ctrl(ctx.get(), EVP_CTRL_GCM_SET_TAG, kTagBytes, tag.data()) != 1 ||
      EVP_DecryptFinal_ex(ctx.get(), out + len, &len) != 1) {
    return Status::DataLoss("a stored secret cannot be opened with " + where_ +
                            ": the key file is not the one it was sealed with, or the secret "
                            "was altered");
  }
  return plain;
}

}  // namespace millrace
