// Glob: the file-name patterns of job sources ("s3://b/ev/2026-*/{a,b}.csv", "/in/*.json").
//
// Contract
// - Syntax (matching is against the whole key):
//     *        any run of characters except '/'
//     **       any run of characters, '/' included (crosses directory levels)
//     ?        one character except '/'
//     [abc]    one character of the set; [a-z] ranges; [!a] or [^a] negates; a ']' right after
//              '[' (or '[!') is literal; classes never match '/'
//     {a,b,c}  one of the alternatives, each itself a pattern (nesting allowed); {} and {,x}
//              allow an empty alternative
//     \c       the character c literally (escapes any metacharacter, in classes too)
//   Anything else is literal. An unterminated '[' or '{', or a trailing '\', is
//   INVALID_ARGUMENT naming the pattern.
// - Characters are UTF-8 code points ('?' and classes consume a whole multi-byte character);
//   bytes that are not valid UTF-8 stand for themselves, so any byte string can be matched.
// - Matching simulates a Thompson NFA over the compiled pattern: O(len(key) * len(pattern))
//   time whatever the pattern, no backtracking.
// - LiteralPrefix() is the longest prefix every match starts with that contains no
//   metacharacter (escapes resolved): an S3 source lists only that prefix, a local source
//   walks only from its directory.
// - Thread-safety: a compiled Glob is immutable; const methods may be called concurrently.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "common/result.h"

namespace millrace::source {

class Glob {
 public:
  static Result<Glob> Compile(std::string_view pattern);

  // True when the whole of `text` matches.
  bool Matches(std::string_view text) const;
  // True when some string that starts with `prefix` could match: lets a directory walk skip
  // subtrees no path of which can match.
  bool CouldMatchWithPrefix(std::string_view prefix) const;
  // A string every match is strictly greater than (in byte order), at least as tight as the
  // literal prefix allows and tighter when the first non-literal element bounds the next
  // character ("p/{m,n}*" -> "p/l"); "" when nothing better than the prefix is known. S3
  // sources use it as the least ListObjectsV2 start-after.
  std::string ExclusiveLowerBound() const;

  const std::string& LiteralPrefix() const { return literal_prefix_; }
  const std::string& pattern() const { return pattern_; }
  // False when the pattern is a plain literal (it matches exactly one key).
  bool HasWildcards() const { return has_wildcards_; }

 private:
  // One NFA state. kSplit states consume nothing and continue at every state of `out`;
  // the others consume one code point and continue at `next`.
  enum class Op : uint8_t { kLiteral, kAnyButSlash, kAny, kClass, kSplit, kMatch };
  struct Range {
    uint32_t lo;
    uint32_t hi;
  };
  struct State {
    Op op = Op::kMatch;
    uint32_t literal = 0;
    bool negated = false;
    std::vector<Range> ranges;  // kClass
    int next = -1;
    std::vector<int> out;  // kSplit
  };

  Glob() = default;
  bool Consumes(const State& state, uint32_t cp) const;
  // Adds `state` and everything reachable from it without consuming to `set`.
  void AddClosure(int state, std::vector<int>* set, std::vector<uint32_t>* mark,
                  uint32_t generation) const;
  // Runs the NFA over `text` from the start state; returns the live states (empty: no
  // string with this prefix can match).
  std::vector<int> Run(std::string_view text) const;

  friend class GlobCompiler;
  std::string pattern_;
  std::string literal_prefix_;
  bool has_wildcards_ = false;
  std::vector<State> states_;
  int start_ = -1;
};

// Decodes one UTF-8 code point from the front of `text`, advancing it. Invalid or truncated
// sequences yield 0x110000 + the byte, consuming one byte, so decoding never fails and
// distinct byte strings decode to distinct sequences.
uint32_t DecodeCodePoint(std::string_view* text);

}  // namespace millrace::source
