// CheckJsonNesting: the depth a JSON file reaches, brackets in strings not counted, the line
// named; and DuckDB's reader reading a document exactly as deep as the limit, in this process
// (a crash would end the test), so the limit is shown safe.
#include "load/json_nesting.h"

#include <gtest/gtest.h>

#include <fstream>
#include <functional>
#include <random>

#include "engine/database.h"
#include "testing/temp_dir.h"

namespace millrace::load {
namespace {

std::string Nested(int depth, const std::string& inner = "1") {
  return std::string(depth, '[') + inner + std::string(depth, ']');
}

class JsonNestingTest : public ::testing::Test {
 protected:
  std::string Write(const std::string& name, const std::string& content) {
    const std::string path = dir_.Join(name);
    std::ofstream(path, std::ios::binary) << content;
    return path;
  }
  testing::TempDir dir_;
};

TEST_F(JsonNestingTest, CountsDepthOutsideStringsAndNamesTheLine) {
  EXPECT_TRUE(CheckJsonNesting(Write("flat.json", "{\"a\": [1, {\"b\": 2}]}\n"), 3).ok());
  EXPECT_FALSE(CheckJsonNesting(Write("deep.json", "{\"a\": [1, {\"b\": [2]}]}\n"), 3).ok());
  // Brackets inside strings, escaped quotes included, are text.
  EXPECT_TRUE(CheckJsonNesting(Write("strings.json", "{\"a\": \"[[[[{{{{\\\"[[[[\"}\n"), 1).ok());
  // Siblings do not add up: depth comes back down.
  EXPECT_TRUE(CheckJsonNesting(Write("siblings.json", "[[1],[2],[3]]\n[[4]]\n"), 2).ok());
  const Status deep = CheckJsonNesting(
      Write("third_line.json", "{\"a\": 1}\n{\"b\": 2}\n" + Nested(100000) + "\n"));
  ASSERT_FALSE(deep.ok());
  EXPECT_EQ(deep.code(), StatusCode::kInvalidArgument);
  EXPECT_NE(deep.message().find("deeper than 1000 levels at line 3"), std::string::npos)
      << deep.message();
  EXPECT_EQ(CheckJsonNesting(dir_.Join("missing.json")).code(), StatusCode::kIoError);
}

// The scan reads blocks of 64 KiB: a run of backslashes split by a block boundary still decides
// whether the quote after it ends the string.
TEST_F(JsonNestingTest, EscapesAcrossBlockBoundaries) {
  for (size_t offset = 65530; offset < 65540; ++offset) {
    // {"a": "<filler>\\\"[[[" }: three backslashes escape the quote, so "[[[" is text.
    const std::string prefix = "{\"a\": \"";
    const std::string filler(offset - prefix.size(), 'x');
    const std::string escaped = prefix + filler + "\\\\\\\"[[[\"}\n";
    EXPECT_TRUE(CheckJsonNesting(Write("escaped.json", escaped), 1).ok()) << offset;
    // Two backslashes escape each other: the quote ends the string and "[[[" nests.
    const std::string closed = prefix + filler + "\\\\\", \"b\": [[[1]]]}\n";
    EXPECT_FALSE(CheckJsonNesting(Write("closed.json", closed), 3).ok()) << offset;
    EXPECT_TRUE(CheckJsonNesting(Write("closed.json", closed), 4).ok()) << offset;
  }
}

TEST_F(JsonNestingTest, AFileThatEndsInsideAValueIsRefusedWhole) {
  std::string array = "[";
  for (int i = 0; i < 100; ++i)
    array += (i ? ",\n" : "\n") + std::string("{\"id\": ") + std::to_string(i) + "}";
  const std::string whole = array + "\n]\n";
  EXPECT_TRUE(CheckJsonNesting(Write("whole.json", whole)).ok());
  const Status cut = CheckJsonNesting(Write("cut.json", array + ",\n"));
  ASSERT_FALSE(cut.ok());
  EXPECT_NE(cut.message().find("ends inside an array or object: the value that starts at line 1 "
                               "is not closed by the end of the file, line 101"),
            std::string::npos)
      << cut.message();
  const Status in_string = CheckJsonNesting(Write("string.json", "{\"a\": \"unfinished"));
  ASSERT_FALSE(in_string.ok());
  EXPECT_NE(in_string.message().find("ends inside a string: the value that starts at line 1 "),
            std::string::npos)
      << in_string.message();
  // Lines: a line of newline-delimited JSON cut short is named, not the file's last line.
  const Status lines =
      CheckJsonNesting(Write("lines.json", "{\"a\": 1}\n{\"a\": \n{\"a\": 3}\n{\"a\": 4}\n"));
  ASSERT_FALSE(lines.ok());
  EXPECT_NE(lines.message().find("the value that starts at line 2 is not closed by the end of the "
                                 "file, line 4"),
            std::string::npos)
      << lines.message();
}

// Random JSON-like files (nesting, strings holding brackets, quotes and runs of backslashes,
// scalars, top-level arrays and scalars, cut files), scanned 64 bytes at a time and byte by byte:
// the same answer, counts and error message included, whatever falls on a window's edge.
TEST_F(JsonNestingTest, WindowsAndTheByteLoopAgree) {
  std::mt19937 rng(20261207);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  std::function<void(std::string&, int)> value = [&](std::string& out, int depth) {
    const int kind = depth > 12 ? 3 + pick(3) : pick(6);
    if (kind <= 1) {
      out += kind == 0 ? '[' : '{';
      const int n = pick(5);
      for (int i = 0; i < n; ++i) {
        if (i) out += pick(4) == 0 ? ",\n " : ",";
        if (kind == 1) out += "\"k\": ";
        value(out, depth + 1);
      }
      out += kind == 0 ? ']' : '}';
    } else if (kind <= 3) {
      out += '"';
      const int n = pick(40);
      for (int i = 0; i < n; ++i) {
        const int c = pick(12);
        if (c == 0) {
          out += std::string(static_cast<size_t>(1 + pick(4)), '\\');
          out += pick(2) ? '"' : 'x';
        } else if (c == 1) {
          out += "[{]}"[pick(4)];
        } else {
          out += static_cast<char>('a' + pick(26));
        }
      }
      // An odd run of backslashes before it would escape the closing quote.
      size_t run = 0;
      while (run < out.size() && out[out.size() - 1 - run] == '\\')
        ++run;
      if (run % 2 == 1) out += '\\';
      out += '"';
    } else {
      out += std::to_string(pick(100000));
    }
  };
  for (int file = 0; file < 300; ++file) {
    std::string content;
    if (file % 3 == 0) {
      // A first top-level array, whose elements are counted.
      content += "[";
      const int elements = 1 + pick(300);
      for (int e = 0; e < elements; ++e) {
        if (e) content += pick(4) == 0 ? ",\n" : ",";
        value(content, 1);
      }
      content += "]\n";
    }
    const int documents = 1 + pick(400);
    for (int d = 0; d < documents; ++d) {
      value(content, pick(3) == 0 ? 0 : 1);
      content += pick(3) == 0 ? " \n" : "\n";
    }
    if (pick(4) == 0)
      content.resize(content.size() - static_cast<size_t>(pick(20)) % content.size());
    const std::string path = Write("random.json", content);
    for (int max_depth : {3, 8, kMaxJsonDepth}) {
      JsonCounts fast, slow;
      const Status a = internal::ScanJsonNesting(path, max_depth, &fast, true);
      const Status b = internal::ScanJsonNesting(path, max_depth, &slow, false);
      ASSERT_EQ(a.ToString(), b.ToString()) << "file " << file << " max_depth " << max_depth;
      if (!a.ok()) continue;
      EXPECT_EQ(fast.top_values, slow.top_values) << file;
      EXPECT_EQ(fast.top_array, slow.top_array) << file;
      EXPECT_EQ(fast.top_scalar, slow.top_scalar) << file;
      EXPECT_EQ(fast.array_elements, slow.array_elements) << file;
    }
  }
}

TEST_F(JsonNestingTest, DuckDbReadsADocumentAsDeepAsTheLimit) {
  const std::string path = Write("limit.json", "{\"v\": " + Nested(kMaxJsonDepth - 1, "7") + "}\n");
  ASSERT_TRUE(CheckJsonNesting(path).ok());
  auto db = engine::Database::Open(engine::DatabaseOptions{});
  ASSERT_TRUE(db.ok()) << db.status().ToString();
  auto conn = (*db)->Connect();
  ASSERT_TRUE(conn.ok()) << conn.status().ToString();
  auto rows = engine::QueryTextRows(**conn, "SELECT count(*) FROM read_json('" + path + "')");
  ASSERT_TRUE(rows.ok()) << rows.status().ToString();
  EXPECT_EQ(*rows, (std::vector<std::vector<std::string>>{{"1"}}));
  auto objects =
      engine::QueryTextRows(**conn, "SELECT count(*) FROM read_json_objects('" + path + "')");
  ASSERT_TRUE(objects.ok()) << objects.status().ToString();
}

}  // namespace
}  // namespace millrace::load
