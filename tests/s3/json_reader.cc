#include "s3/json_reader.h"

#include <cctype>

namespace millrace::testing {

class JsonParser {
 public:
  explicit JsonParser(std::string_view text) : text_(text) {}

  Result<JsonValue> Document() {
    JsonValue value;
    MR_RETURN_IF_ERROR(Value(&value, 0));
    SkipSpace();
    if (pos_ != text_.size()) return Error("trailing characters");
    return value;
  }

 private:
  static constexpr int kMaxDepth = 64;

  Status Error(std::string_view what) const {
    return Status::InvalidArgument("JSON: " + std::string(what) + " at byte " +
                                   std::to_string(pos_));
  }

  void SkipSpace() {
    while (pos_ < text_.size() && (text_[pos_] == ' ' || text_[pos_] == '\t' ||
                                   text_[pos_] == '\n' || text_[pos_] == '\r')) {
      ++pos_;
    }
  }

  bool Consume(std::string_view literal) {
    if (text_.substr(pos_, literal.size()) != literal) return false;
    pos_ += literal.size();
    return true;
  }

  Status Value(JsonValue* out, int depth) {
    if (depth > kMaxDepth) return Error("nesting too deep");
    SkipSpace();
    if (pos_ >= text_.size()) return Error("unexpected end");
    const char c = text_[pos_];
    if (c == '{') return Object(out, depth);
    if (c == '[') return Array(out, depth);
    if (c == '"') {
      out->kind_ = JsonValue::Kind::kString;
      return String(&out->text_);
    }
    for (const bool literal : {true, false}) {
      if (Consume(literal ? "true" : "false")) {
        out->kind_ = JsonValue::Kind::kBool;
        out->bool_ = literal;
        return Status::Ok();
      }
    }
    if (Consume("null")) return Status::Ok();
    return Number(out);
  }

  Status Number(JsonValue* out) {
    const size_t start = pos_;
    if (pos_ < text_.size() && text_[pos_] == '-') ++pos_;
    while (pos_ < text_.size() &&
           (std::isdigit(static_cast<unsigned char>(text_[pos_])) || text_[pos_] == '.' ||
            text_[pos_] == 'e' || text_[pos_] == 'E' || text_[pos_] == '+' || text_[pos_] == '-')) {
      ++pos_;
    }
    if (pos_ == start) return Error("unexpected character");
    out->kind_ = JsonValue::Kind::kNumber;
    out->text_ = std::string(text_.substr(start, pos_ - start));
    return Status::Ok();
  }

  Status Hex4(uint32_t* out) {
    if (pos_ + 4 > text_.size()) return Error("short \\u escape");
    *out = 0;
    for (int i = 0; i < 4; ++i) {
      const char c = text_[pos_++];
      *out <<= 4;
      if (c >= '0' && c <= '9')
        *out |= c - '0';
      else if (c >= 'a' && c <= 'f')
        *out |= c - 'a' + 10;
      else if (c >= 'A' && c <= 'F')
        *out |= c - 'A' + 10;
      else
        return Error("bad \\u escape");
    }
    return Status::Ok();
  }

  static void AppendUtf8(uint32_t cp, std::string* out) {
    if (cp < 0x80) {
      *out += static_cast<char>(cp);
    } else if (cp < 0x800) {
      *out += static_cast<char>(0xC0 | (cp >> 6));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else if (cp < 0x10000) {
      *out += static_cast<char>(0xE0 | (cp >> 12));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    } else {
      *out += static_cast<char>(0xF0 | (cp >> 18));
      *out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
      *out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
      *out += static_cast<char>(0x80 | (cp & 0x3F));
    }
  }

  Status String(std::string* out) {
    ++pos_;  // opening quote
    while (pos_ < text_.size()) {
      const char c = text_[pos_++];
      if (c == '"') return Status::Ok();
      if (static_cast<unsigned char>(c) < 0x20) return Error("control character in string");
      if (c != '\\') {
        *out += c;
        continue;
      }
      if (pos_ >= text_.size()) break;
      const char e = text_[pos_++];
      switch (e) {
        case '"':
          *out += '"';
          break;
        case '\\':
          *out += '\\';
          break;
        case '/':
          *out += '/';
          break;
        case 'b':
          *out += '\b';
          break;
        case 'f':
          *out += '\f';
          break;
        case 'n':
          *out += '\n';
          break;
        case 'r':
          *out += '\r';
          break;
        case 't':
          *out += '\t';
          break;
        case 'u': {
          uint32_t cp = 0;
          MR_RETURN_IF_ERROR(Hex4(&cp));
          if (cp >= 0xD800 && cp < 0xDC00) {
            uint32_t low = 0;
            if (!Consume("\\u")) return Error("lone surrogate");
            MR_RETURN_IF_ERROR(Hex4(&low));
            if (low < 0xDC00 || low >= 0xE000) return Error("bad surrogate pair");
            cp = 0x10000 + ((cp - 0xD800) << 10) + (low - 0xDC00);
          }
          AppendUtf8(cp, out);
          break;
        }
        default:
          return Error("bad escape");
      }
    }
    return Error("unterminated string");
  }

  Status Array(JsonValue* out, int depth) {
    ++pos_;
    out->kind_ = JsonValue::Kind::kArray;
    SkipSpace();
    if (Consume("]")) return Status::Ok();
    for (;;) {
      JsonValue item;
      MR_RETURN_IF_ERROR(Value(&item, depth + 1));
      out->items_.push_back(std::move(item));
      SkipSpace();
      if (Consume("]")) return Status::Ok();
      if (!Consume(",")) return Error("expected ',' or ']'");
    }
  }

  Status Object(JsonValue* out, int depth) {
    ++pos_;
    out->kind_ = JsonValue::Kind::kObject;
    SkipSpace();
    if (Consume("}")) return Status::Ok();
    for (;;) {
      SkipSpace();
      if (pos_ >= text_.size() || text_[pos_] != '"') return Error("expected member name");
      std::string name;
      MR_RETURN_IF_ERROR(String(&name));
      SkipSpace();
      if (!Consume(":")) return Error("expected ':'");
      JsonValue value;
      MR_RETURN_IF_ERROR(Value(&value, depth + 1));
      out->members_.emplace_back(std::move(name), std::move(value));
      SkipSpace();
      if (Consume("}")) return Status::Ok();
      if (!Consume(",")) return Error("expected ',' or '}'");
    }
  }

  std::string_view text_;
  size_t pos_ = 0;
};

Result<JsonValue> JsonValue::Parse(std::string_view text) {
  return JsonParser(text).Document();
}

const JsonValue& JsonValue::operator[](std::string_view name) const {
  static const JsonValue kNull;
  for (const auto& [member, value] : members_) {
    if (member == name) return value;
  }
  return kNull;
}

bool JsonValue::has(std::string_view name) const {
  for (const auto& member : members_) {
    if (member.first == name) return true;
  }
  return false;
}

}  // namespace millrace::testing
