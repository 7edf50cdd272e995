#include "common/secret_box.h"

#include <gtest/gtest.h>
#include <sys/stat.h>

#include <fstream>

#include "testing/temp_dir.h"

namespace millrace {
namespace {

TEST(SecretBoxTest, SealedTextOpensWithItsKeyOnly) {
  auto box = SecretBox::WithKey(std::string(SecretBox::kKeyBytes, 'a'));
  for (const std::string& plain : {std::string(), std::string("s3cr3t"), std::string(5000, 'z')}) {
    auto sealed = box->Seal(plain);
    ASSERT_TRUE(sealed.ok());
    EXPECT_TRUE(SecretBox::IsSealed(*sealed));
    if (!plain.empty()) EXPECT_EQ(sealed->find(plain), std::string::npos);
    EXPECT_EQ(box->Unseal(*sealed).value_or("?"), plain);
  }
  // A fresh nonce each time: the same text seals differently.
  EXPECT_NE(box->Seal("same").value(), box->Seal("same").value());

  const std::string sealed = box->Seal("s3cr3t").value();
  auto other = SecretBox::WithKey(std::string(SecretBox::kKeyBytes, 'b'), "other.key");
  auto wrong = other->Unseal(sealed);
  EXPECT_EQ(wrong.status().code(), StatusCode::kDataLoss);
  EXPECT_NE(wrong.status().message().find("other.key"), std::string::npos);
  // Altered anywhere, it does not open.
  std::string altered = sealed;
  altered[altered.size() - 6] = altered[altered.size() - 6] == 'A' ? 'B' : 'A';
  EXPECT_EQ(box->Unseal(altered).status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(box->Unseal("clear text").status().code(), StatusCode::kDataLoss);
  EXPECT_EQ(box->Unseal("mrsec1:!!!").status().code(), StatusCode::kDataLoss);
  EXPECT_FALSE(SecretBox::IsSealed("INSERT INTO t ..."));
}

TEST(SecretBoxTest, TheKeyFileIsCreatedOnceAndPrivate) {
  testing::TempDir dir;
  const std::string path = dir.Join("secret.key");
  auto first = SecretBox::OpenOrCreate(path);
  ASSERT_TRUE(first.ok()) << first.status().ToString();
  struct stat st {};
  ASSERT_EQ(::stat(path.c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  EXPECT_EQ(st.st_size, static_cast<off_t>(SecretBox::kKeyBytes));
  // Opened again (a restart), it is the same key.
  const std::string sealed = (*first)->Seal("kept").value();
  auto again = SecretBox::OpenOrCreate(path);
  ASSERT_TRUE(again.ok()) << again.status().ToString();
  EXPECT_EQ((*again)->Unseal(sealed).value_or("?"), "kept");

  // A key others may read is refused, naming the fix.
  ASSERT_EQ(::chmod(path.c_str(), 0644), 0);
  auto exposed = SecretBox::OpenOrCreate(path);
  EXPECT_EQ(exposed.status().code(), StatusCode::kPermissionDenied);
  EXPECT_NE(exposed.status().message().find("chmod 600 " + path), std::string::npos);
  // A key file of another size is refused.
  const std::string short_key = dir.Join("short.key");
  {
    std::ofstream out(short_key);
    out << "0123456789";
  }
  ASSERT_EQ(::chmod(short_key.c_str(), 0600), 0);
  EXPECT_EQ(SecretBox::OpenOrCreate(short_key).status().code(), StatusCode::kDataLoss);
}

}  // namespace
}  // namespace millrace
