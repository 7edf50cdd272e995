// The S3 response parsers on documents s3rver never sends: URL-encoded listings (s3rver ignores
// encoding-type=url), malformed XML, error documents and the two date formats.
#include "s3/s3_xml.h"

#include <gtest/gtest.h>

#include "s3/sigv4.h"

namespace millrace::s3 {
namespace {

constexpr char kEncodedListing[] = R"(<?xml version="1.0" encoding="UTF-8"?>
<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">
  <Name>b</Name><Prefix>dir%2F</Prefix><KeyCount>2</KeyCount><MaxKeys>2</MaxKeys>
  <EncodingType>url</EncodingType><IsTruncated>true</IsTruncated>
  <Contents><Key>dir/a+b%2Bc%25d.csv</Key><LastModified>2026-01-02T03:04:05.678Z</LastModified>
    <ETag>&quot;9b2cf535f27731c974343645a3985328&quot;</ETag><Size>1234</Size></Contents>
  <Contents><Key>dir/%E6%97%A5%01.csv</Key><LastModified>2026-01-02T03:04:06.000Z</LastModified>
    <ETag>"abc"</ETag><Size>0</Size></Contents>
  <NextContinuationToken>1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=</NextContinuationToken>
</ListBucketResult>)";

TEST(S3XmlTest, UrlEncodedListingIsDecoded) {
  auto page = ParseListObjectsV2(kEncodedListing);
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 2u);
  EXPECT_EQ(page->objects[0].key, "dir/a b+c%d.csv");  // '+' is a space in this encoding
  EXPECT_EQ(page->objects[0].etag, "9b2cf535f27731c974343645a3985328");
  EXPECT_EQ(page->objects[0].size, 1234u);
  EXPECT_EQ(FormatUtc(page->objects[0].last_modified), "2026-01-02 03:04:05");
  EXPECT_EQ(page->objects[1].key, "dir/\xE6\x97\xA5\x01.csv");
  EXPECT_EQ(page->objects[1].size, 0u);
  EXPECT_TRUE(page->truncated);
  EXPECT_EQ(page->next_continuation_token, "1ueGcxLPRx1Tr/XYExHnhbYLgveDs2J/wm36Hy4vbOwM=");
}

TEST(S3XmlTest, PlainListingKeepsPercentAndPlus) {
  auto page = ParseListObjectsV2(
      "<ListBucketResult><IsTruncated>false</IsTruncated><Contents><Key>a+b%20c</Key>"
      "<LastModified>2026-01-02T03:04:05Z</LastModified><ETag>\"e\"</ETag><Size>1</Size>"
      "</Contents></ListBucketResult>");
  ASSERT_TRUE(page.ok()) << page.status().ToString();
  ASSERT_EQ(page->objects.size(), 1u);
  EXPECT_EQ(page->objects[0].key, "a+b%20c");
  EXPECT_FALSE(page->truncated);
}

TEST(S3XmlTest, MalformedListingsAreDataLoss) {
  for (const char* body :
       {"", "not xml", "<ListBucketResult><Contents>", "<Other/>",
        "<ListBucketResult><Contents><Key>k</Key><Size>x</Size></Contents></ListBucketResult>",
        "<ListBucketResult><Contents><Key>k</Key><Size>1</Size><LastModified>yesterday"
        "</LastModified></Contents></ListBucketResult>",
        "<ListBucketResult><IsTruncated>true</IsTruncated></ListBucketResult>"}) {
    EXPECT_EQ(ParseListObjectsV2(body).status().code(), StatusCode::kDataLoss) << body;
  }
}

TEST(S3XmlTest, ErrorDocumentsAndDates) {
  const ErrorDocument doc = ParseErrorDocument(
      "<?xml version=\"1.0\"?><Error><Code>NoSuchKey</Code><Message>The specified key does not "
      "exist.</Message><Key>a b</Key></Error>");
  EXPECT_EQ(doc.code, "NoSuchKey");
  EXPECT_EQ(doc.message, "The specified key does not exist.");
  EXPECT_EQ(ParseErrorDocument("<html>bad gateway</html>").code, "");
  EXPECT_EQ(ParseErrorDocument("").code, "");

  auto http = ParseHttpDate("Fri, 24 May 2013 00:00:00 GMT");
  ASSERT_TRUE(http.ok());
  EXPECT_EQ(FormatAmzDate(*http), "20130524T000000Z");
  for (const char* bad : {"", "24 May 2013 00:00:00 GMT", "Fri, 24 Mai 2013 00:00:00 GMT",
                          "Fri, 24 May 2013 00:00:00 UTC"}) {
    EXPECT_FALSE(ParseHttpDate(bad).ok()) << bad;
  }
  EXPECT_FALSE(ParseIso8601("2026-01-02 03:04:05Z").ok());
  EXPECT_FALSE(ParseIso8601("2026-13-02T03:04:05Z").ok());
  EXPECT_EQ(StripQuotes("\"abc\""), "abc");
  EXPECT_EQ(StripQuotes("abc"), "abc");
}

}  // namespace
}  // namespace millrace::s3
