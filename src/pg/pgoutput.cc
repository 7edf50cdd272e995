#include "pg/pgoutput.h"

namespace millrace::pg {

using change::Tuple;
using change::TupleValue;
namespace {

// Reads big-endian fields off a message, remembering the first shortfall.
class Reader {
 public:
  Reader(std::string_view data, char tag) : data_(data), tag_(tag) {}

  uint64_t Int(int bytes, const char* what) {
    if (!Need(static_cast<size_t>(bytes), what)) return 0;
    uint64_t v = 0;
    for (int i = 0; i < bytes; ++i)
      v = (v << 8) | static_cast<unsigned char>(data_[pos_++]);
    return v;
  }
  char Byte(const char* what) { return static_cast<char>(Int(1, what)); }
  std::string CString(const char* what) {
    const size_t end = data_.find('\0', pos_);
    if (end == std::string_view::npos) {
      Fail(what);
      return "";
    }
    std::string out(data_.substr(pos_, end - pos_));
    pos_ = end + 1;
    return out;
  }
  std::string Bytes(size_t n, const char* what) {
    if (!Need(n, what)) return "";
    std::string out(data_.substr(pos_, n));
    pos_ += n;
    return out;
  }
  Tuple ReadTuple() {
    const size_t count = Int(2, "the column count");
    Tuple tuple;
    tuple.reserve(count);
    for (size_t i = 0; i < count && error_.ok(); ++i) {
      TupleValue value;
      const char kind = Byte("a column's kind");
      if (kind == 'n') {
        value.kind = TupleValue::Kind::kNull;
      } else if (kind == 'u') {
        value.kind = TupleValue::Kind::kUnchanged;
      } else if (kind == 't' || kind == 'b') {
        value.kind = TupleValue::Kind::kText;
        const size_t length = Int(4, "a value's length");
        value.text = Bytes(length, "a value");
      } else if (error_.ok()) {
        error_ = Status::DataLoss(std::string("pgoutput message '") + tag_ +
                                  "': unknown column kind '" + kind + "'");
      }
      tuple.push_back(std::move(value));
    }
    return tuple;
  }
  const Status& error() const { return error_; }

 private:
  bool Need(size_t n, const char* what) {
    if (!error_.ok()) return false;
    if (data_.size() - pos_ >= n) return true;
    Fail(what);
    return false;
  }
  void Fail(const char* what) {
    if (!error_.ok()) return;
    error_ =
        Status::DataLoss(std::string("pgoutput message '") + tag_ + "' is cut short at " + what);
  }

  std::string_view data_;
  size_t pos_ = 1;  // after the tag
  char tag_;
  Status error_;
};

template <typename T>
Result<PgOutputMessage> Done(const Reader& r, T message) {
  if (!r.error().ok()) return r.error();
  return PgOutputMessage(std::move(message));
}

}  // namespace

Result<PgOutputMessage> DecodePgOutput(std::string_view data) {
  if (data.empty()) return Status::DataLoss("empty pgoutput message");
  const char tag = data[0];
  Reader r(data, tag);
  switch (tag) {
    case 'B': {
      BeginMessage m;
      m.final_lsn = r.Int(8, "the final LSN");
      m.commit_time_us = static_cast<int64_t>(r.Int(8, "the commit time"));
      m.xid = static_cast<uint32_t>(r.Int(4, "the xid"));
      return Done(r, std::move(m));
    }
    case 'C': {
      CommitMessage m;
      r.Byte("the flags");
      m.commit_lsn = r.Int(8, "the commit LSN");
      m.end_lsn = r.Int(8, "the end LSN");
      m.commit_time_us = static_cast<int64_t>(r.Int(8, "the commit time"));
      return Done(r, std::move(m));
    }
    case 'R': {
      RelationMessage m;
      m.oid = static_cast<uint32_t>(r.Int(4, "the relation id"));
      m.schema = r.CString("the schema");
      m.name = r.CString("the relation name");
      m.replica_identity = r.Byte("the replica identity");
      const size_t columns = r.Int(2, "the column count");
      for (size_t i = 0; i < columns && r.error().ok(); ++i) {
        RelationColumn c;
        c.key = (r.Byte("a column's flags") & 1) != 0;
        c.name = r.CString("a column name");
        c.type_oid = static_cast<uint32_t>(r.Int(4, "a column type"));
        c.type_modifier = static_cast<int32_t>(r.Int(4, "a type modifier"));
        m.columns.push_back(std::move(c));
      }
      return Done(r, std::move(m));
    }
    case 'Y': {
      TypeMessage m;
      m.oid = static_cast<uint32_t>(r.Int(4, "the type id"));
      m.schema = r.CString("the schema");
      m.name = r.CString("the type name");
      return Done(r, std::move(m));
    }
    case 'I': {
      InsertMessage m;
      m.relation = static_cast<uint32_t>(r.Int(4, "the relation id"));
      if (r.Byte("the tuple tag") != 'N' && r.error().ok()) {
        return Status::DataLoss("pgoutput message 'I': expected a new tuple");
      }
      m.row = r.ReadTuple();
      return Done(r, std::move(m));
    }
    case 'U': {
      UpdateMessage m;
      m.relation = static_cast<uint32_t>(r.Int(4, "the relation id"));
      char next = r.Byte("the tuple tag");
      if (next == 'K' || next == 'O') {
        m.old_kind = next;
        m.old_row = r.ReadTuple();
        next = r.Byte("the tuple tag");
      }
      if (next != 'N' && r.error().ok()) {
        return Status::DataLoss("pgoutput message 'U': expected a new tuple");
      }
      m.row = r.ReadTuple();
      return Done(r, std::move(m));
    }
    case 'D': {
      DeleteMessage m;
      m.relation = static_cast<uint32_t>(r.Int(4, "the relation id"));
      m.old_kind = r.Byte("the tuple tag");
      if (m.old_kind != 'K' && m.old_kind != 'O' && r.error().ok()) {
        return Status::DataLoss("pgoutput message 'D': expected an old key or row");
      }
      m.old_row = r.ReadTuple();
      return Done(r, std::move(m));
    }
    case 'T': {
      TruncateMessage m;
      const size_t count = r.Int(4, "the relation count");
      const char options = r.Byte("the options");
      m.cascade = (options & 1) != 0;
      m.restart_identity = (options & 2) != 0;
      for (size_t i = 0; i < count && r.error().ok(); ++i) {
        m.relations.push_back(static_cast<uint32_t>(r.Int(4, "a relation id")));
      }
      return Done(r, std::move(m));
    }
    case 'O':
    case 'M':
      return PgOutputMessage(IgnoredMessage{tag});
    default:
      return Status::DataLoss(std::string("unknown pgoutput message '") + tag + "'");
  }
}

}  // namespace millrace::pg
