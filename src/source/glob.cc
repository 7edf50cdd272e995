#include "source/glob.h"

#include <algorithm>
#include <memory>
#include <utility>

namespace millrace::source {
namespace {

constexpr uint32_t kInvalidByteBase = 0x110000;

bool IsContinuation(unsigned char c) {
  return (c & 0xC0) == 0x80;
}

void EncodeCodePoint(uint32_t cp, std::string* out) {
  if (cp >= kInvalidByteBase) {
    out->push_back(static_cast<char>(cp - kInvalidByteBase));
  } else if (cp < 0x80) {
    out->push_back(static_cast<char>(cp));
  } else if (cp < 0x800) {
    out->push_back(static_cast<char>(0xC0 | (cp >> 6)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else if (cp < 0x10000) {
    out->push_back(static_cast<char>(0xE0 | (cp >> 12)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  } else {
    out->push_back(static_cast<char>(0xF0 | (cp >> 18)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 12) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | ((cp >> 6) & 0x3F)));
    out->push_back(static_cast<char>(0x80 | (cp & 0x3F)));
  }
}

unsigned char FirstByte(uint32_t cp) {
  std::string bytes;
  EncodeCodePoint(cp, &bytes);
  return static_cast<unsigned char>(bytes[0]);
}

// The parsed pattern, before it becomes an NFA.
struct Node;
using Sequence = std::vector<Node>;
struct Node {
  enum class Kind { kLiteral, kQuestion, kStar, kDoubleStar, kClass, kAlternation };
  Kind kind = Kind::kLiteral;
  uint32_t literal = 0;
  bool negated = false;
  std::vector<std::pair<uint32_t, uint32_t>> ranges;
  std::vector<Sequence> alternatives;
};

}  // namespace

uint32_t DecodeCodePoint(std::string_view* text) {
  const auto* s = reinterpret_cast<const unsigned char*>(text->data());
  const size_t n = text->size();
  const unsigned char c = s[0];
  size_t len = 0;
  uint32_t cp = 0;
  unsigned char min2 = 0x80;
  unsigned char max2 = 0xBF;
  if (c < 0x80) {
    len = 1;
    cp = c;
  } else if (c >= 0xC2 && c <= 0xDF) {
    len = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    len = 3;
    cp = c & 0x0F;
    if (c == 0xE0) min2 = 0xA0;  // overlong
    if (c == 0xED) max2 = 0x9F;  // surrogates
  } else if (c >= 0xF0 && c <= 0xF4) {
    len = 4;
    cp = c & 0x07;
    if (c == 0xF0) min2 = 0x90;  // overlong
    if (c == 0xF4) max2 = 0x8F;  // past U+10FFFF
  }
  bool valid = len > 0 && len <= n;
  for (size_t i = 1; valid && i < len; ++i) {
    if (!IsContinuation(s[i]) || (i == 1 && (s[1] < min2 || s[1] > max2))) valid = false;
    cp = (cp << 6) | (s[i] & 0x3F);
  }
  if (!valid) {
    text->remove_prefix(1);
    return kInvalidByteBase + c;
  }
  text->remove_prefix(len);
  return cp;
}

// Parses a pattern into nodes and builds the NFA from them.
class GlobCompiler {
 public:
  explicit GlobCompiler(std::string_view pattern) : pattern_(pattern), rest_(pattern) {}

  Result<Glob> Compile() {
    Glob glob;
    glob.pattern_ = std::string(pattern_);
    Sequence top;
    MR_RETURN_IF_ERROR(ParseSequence(/*in_braces=*/false, &top));
    for (const Node& node : top) {
      if (node.kind != Node::Kind::kLiteral) {
        glob.has_wildcards_ = true;
        break;
      }
      EncodeCodePoint(node.literal, &glob.literal_prefix_);
    }
    glob_ = &glob;
    const int match = NewState(Glob::Op::kMatch);
    glob.start_ = CompileSequence(top, match);
    return glob;
  }

 private:
  Status Error(std::string_view what) const {
    return Status::InvalidArgument("invalid glob pattern \"" + std::string(pattern_) +
                                   "\": " + std::string(what));
  }

  bool AtEnd() const { return rest_.empty(); }
  char Peek() const { return rest_.front(); }

  // Reads one (possibly escaped) code point.
  Result<uint32_t> ReadChar() {
    if (Peek() == '\\') {
      rest_.remove_prefix(1);
      if (AtEnd()) return Error("trailing backslash");
    }
    return DecodeCodePoint(&rest_);
  }

  Status ParseSequence(bool in_braces, Sequence* out) {
    while (!AtEnd()) {
      const char c = Peek();
      if (in_braces && (c == ',' || c == '}')) return Status::Ok();
      Node node;
      if (c == '*') {
        rest_.remove_prefix(1);
        node.kind = Node::Kind::kStar;
        while (!AtEnd() && Peek() == '*') {
          rest_.remove_prefix(1);
          node.kind = Node::Kind::kDoubleStar;
        }
      } else if (c == '?') {
        rest_.remove_prefix(1);
        node.kind = Node::Kind::kQuestion;
      } else if (c == '[') {
        MR_RETURN_IF_ERROR(ParseClass(&node));
      } else if (c == '{') {
        MR_RETURN_IF_ERROR(ParseAlternation(&node));
      } else {
        MR_ASSIGN_OR_RETURN(node.literal, ReadChar());
      }
      out->push_back(std::move(node));
    }
    return Status::Ok();
  }

  Status ParseClass(Node* node) {
    rest_.remove_prefix(1);  // '['
    node->kind = Node::Kind::kClass;
    if (!AtEnd() && (Peek() == '!' || Peek() == '^')) {
      node->negated = true;
      rest_.remove_prefix(1);
    }
    bool first = true;
    while (true) {
      if (AtEnd()) return Error("unterminated '['");
      if (Peek() == ']' && !first) {
        rest_.remove_prefix(1);
        return Status::Ok();
      }
      first = false;
      MR_ASSIGN_OR_RETURN(uint32_t lo, ReadChar());
      uint32_t hi = lo;
      if (rest_.size() >= 2 && rest_[0] == '-' && rest_[1] != ']') {
        rest_.remove_prefix(1);
        MR_ASSIGN_OR_RETURN(hi, ReadChar());
        if (hi < lo) return Error("reversed range in '[...]'");
      }
      node->ranges.emplace_back(lo, hi);
    }
  }

  Status ParseAlternation(Node* node) {
    rest_.remove_prefix(1);  // '{'
    node->kind = Node::Kind::kAlternation;
    while (true) {
      Sequence alternative;
      MR_RETURN_IF_ERROR(ParseSequence(/*in_braces=*/true, &alternative));
      node->alternatives.push_back(std::move(alternative));
      if (AtEnd()) return Error("unterminated '{'");
      const char c = Peek();
      rest_.remove_prefix(1);
      if (c == '}') return Status::Ok();
    }
  }

  int NewState(Glob::Op op) {
    glob_->states_.emplace_back();
    glob_->states_.back().op = op;
    return static_cast<int>(glob_->states_.size()) - 1;
  }

  // Builds back to front: each piece is given the state it continues at.
  int CompileSequence(const Sequence& sequence, int next) {
    for (auto it = sequence.rbegin(); it != sequence.rend(); ++it)
      next = CompileNode(*it, next);
    return next;
  }

  int CompileNode(const Node& node, int next) {
    switch (node.kind) {
      case Node::Kind::kLiteral: {
        const int s = NewState(Glob::Op::kLiteral);
        glob_->states_[s].literal = node.literal;
        glob_->states_[s].next = next;
        return s;
      }
      case Node::Kind::kQuestion: {
        const int s = NewState(Glob::Op::kAnyButSlash);
        glob_->states_[s].next = next;
        return s;
      }
      case Node::Kind::kStar:
      case Node::Kind::kDoubleStar: {
        const int split = NewState(Glob::Op::kSplit);
        const int loop =
            NewState(node.kind == Node::Kind::kStar ? Glob::Op::kAnyButSlash : Glob::Op::kAny);
        glob_->states_[loop].next = split;
        glob_->states_[split].out = {loop, next};
        return split;
      }
      case Node::Kind::kClass: {
        const int s = NewState(Glob::Op::kClass);
        Glob::State& state = glob_->states_[s];
        state.negated = node.negated;
        for (const auto& [lo, hi] : node.ranges)
          state.ranges.push_back({lo, hi});
        state.next = next;
        return s;
      }
      case Node::Kind::kAlternation: {
        std::vector<int> starts;
        for (const Sequence& alternative : node.alternatives) {
          starts.push_back(CompileSequence(alternative, next));
        }
        const int split = NewState(Glob::Op::kSplit);
        glob_->states_[split].out = std::move(starts);
        return split;
      }
    }
    return next;
  }

  std::string_view pattern_;
  std::string_view rest_;
  Glob* glob_ = nullptr;
};

Result<Glob> Glob::Compile(std::string_view pattern) {
  return GlobCompiler(pattern).Compile();
}

bool Glob::Consumes(const State& state, uint32_t cp) const {
  switch (state.op) {
    case Op::kLiteral:
      return cp == state.literal;
    case Op::kAnyButSlash:
      return cp != '/';
    case Op::kAny:
      return true;
    case Op::kClass: {
      if (cp == '/') return false;
      const bool in = std::any_of(state.ranges.begin(), state.ranges.end(),
                                  [cp](const Range& r) { return cp >= r.lo && cp <= r.hi; });
      return in != state.negated;
    }
    case Op::kSplit:
    case Op::kMatch:
      return false;
  }
  return false;
}

void Glob::AddClosure(int state, std::vector<int>* set, std::vector<uint32_t>* mark,
                      uint32_t generation) const {
  // Iterative: nested alternations must not grow the native stack with the pattern.
  std::vector<int> pending{state};
  while (!pending.empty()) {
    const int s = pending.back();
    pending.pop_back();
    if ((*mark)[s] == generation) continue;
    (*mark)[s] = generation;
    if (states_[s].op == Op::kSplit) {
      for (auto it = states_[s].out.rbegin(); it != states_[s].out.rend(); ++it) {
        pending.push_back(*it);
      }
    } else {
      set->push_back(s);
    }
  }
}

std::vector<int> Glob::Run(std::string_view text) const {
  std::vector<uint32_t> mark(states_.size(), 0);
  uint32_t generation = 1;
  std::vector<int> current;
  AddClosure(start_, &current, &mark, generation);
  std::vector<int> next;
  while (!text.empty() && !current.empty()) {
    const uint32_t cp = DecodeCodePoint(&text);
    ++generation;
    next.clear();
    for (int s : current) {
      if (Consumes(states_[s], cp)) AddClosure(states_[s].next, &next, &mark, generation);
    }
    current.swap(next);
  }
  return current;
}

bool Glob::Matches(std::string_view text) const {
  const std::vector<int> live = Run(text);
  return std::any_of(live.begin(), live.end(),
                     [this](int s) { return states_[s].op == Op::kMatch; });
}

bool Glob::CouldMatchWithPrefix(std::string_view prefix) const {
  return !Run(prefix).empty();
}

std::string Glob::ExclusiveLowerBound() const {
  unsigned int least = 0x100;  // smallest byte that can follow the literal prefix
  for (int s : Run(literal_prefix_)) {
    const State& state = states_[s];
    switch (state.op) {
      case Op::kLiteral:
        least = std::min<unsigned int>(least, FirstByte(state.literal));
        break;
      case Op::kClass:
        for (const Range& r : state.ranges) {
          least = std::min<unsigned int>(least, state.negated ? 0 : FirstByte(r.lo));
        }
        break;
      default:  // a wildcard, or the prefix itself matches: nothing tighter than the prefix
        least = 0;
        break;
    }
  }
  // Only printable ASCII bounds: S3 wants start-after as valid UTF-8 text.
  if (least <= 0x22 || least == 0x100) return "";
  return literal_prefix_ + static_cast<char>(std::min<unsigned int>(least - 1, 0x7E));
}

}  // namespace millrace::source
