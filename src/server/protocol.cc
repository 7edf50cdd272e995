#include "server/protocol.h"

#include <openssl/rand.h>

#include <array>
#include <cstdio>

#include "server/wire.h"
#include "sql/mysql_types.h"

namespace millrace::server {
namespace {

constexpr std::array<std::string_view, 33> kCommandNames = {"COM_SLEEP",
                                                            "COM_QUIT",
                                                            "COM_INIT_DB",
                                                            "COM_QUERY",
                                                            "COM_FIELD_LIST",
                                                            "COM_CREATE_DB",
                                                            "COM_DROP_DB",
                                                            "COM_REFRESH",
                                                            "COM_SHUTDOWN",
                                                            "COM_STATISTICS",
                                                            "COM_PROCESS_INFO",
                                                            "COM_CONNECT",
                                                            "COM_PROCESS_KILL",
                                                            "COM_DEBUG",
                                                            "COM_PING",
                                                            "COM_TIME",
                                                            "COM_DELAYED_INSERT",
                                                            "COM_CHANGE_USER",
                                                            "COM_BINLOG_DUMP",
                                                            "COM_TABLE_DUMP",
                                                            "COM_CONNECT_OUT",
                                                            "COM_REGISTER_SLAVE",
                                                            "COM_STMT_PREPARE",
                                                            "COM_STMT_EXECUTE",
                                                            "COM_STMT_SEND_LONG_DATA",
                                                            "COM_STMT_CLOSE",
                                                            "COM_STMT_RESET",
                                                            "COM_SET_OPTION",
                                                            "COM_STMT_FETCH",
                                                            "COM_DAEMON",
                                                            "COM_BINLOG_DUMP_GTID",
                                                            "COM_RESET_CONNECTION",
                                                            "COM_CLONE"};

Status Malformed(std::string_view what) {
  return Status::InvalidArgument("malformed handshake response: " + std::string(what));
}

// A NUL-terminated field that clients may leave out at the very end of the packet.
bool OptionalNulString(WireReader& r, std::string_view* s) {
  if (r.done()) {
    *s = {};
    return true;
  }
  if (r.NulString(s)) return true;
  *s = r.Rest();  // some clients omit the final NUL
  return true;
}

}  // namespace

std::string CommandName(uint8_t command) {
  if (command < kCommandNames.size()) return std::string(kCommandNames[command]);
  char buf[16];
  std::snprintf(buf, sizeof(buf), "COM_0x%02x", command);
  return buf;
}

std::string BuildHandshakeV10(std::string_view server_version, uint32_t connection_id,
                              std::string_view scramble, uint32_t capabilities, uint16_t status) {
  WireWriter w;
  w.Int1(10).NulString(server_version).Int4(connection_id);
  w.Raw(scramble.substr(0, 8)).Int1(0);
  w.Int2(static_cast<uint16_t>(capabilities & 0xffff));
  // utf8mb4_general_ci, the connection collation Millrace announces.
  w.Int1(static_cast<uint8_t>(sql::kUtf8mb4GeneralCi)).Int2(status);
  w.Int2(static_cast<uint16_t>(capabilities >> 16));
  w.Int1(static_cast<uint8_t>(scramble.size() + 1)).Zeros(10);
  w.Raw(scramble.substr(8)).Int1(0);
  w.NulString(kNativePasswordPlugin);
  return w.Take();
}

Result<HandshakeResponse> ParseHandshakeResponse(std::string_view payload) {
  WireReader r(payload);
  HandshakeResponse out;
  if (!r.Int4(&out.capabilities)) return Malformed("truncated capability flags");
  if ((out.capabilities & kClientProtocol41) == 0) {
    return Status::NotSupported("clients older than protocol 4.1 are not supported");
  }
  if (!r.Int4(&out.max_packet) || !r.Int1(&out.charset) || !r.Skip(23)) {
    return Malformed("truncated header");
  }
  if (r.done() && (out.capabilities & kClientSsl) != 0) {
    out.ssl_request = true;
    return out;
  }
  std::string_view user;
  if (!r.NulString(&user)) return Malformed("unterminated user name");
  out.user = std::string(user);
  std::string_view auth;
  if ((out.capabilities & kClientPluginAuthLenencData) != 0) {
    if (!r.LenEncString(&auth)) return Malformed("truncated auth response");
  } else if ((out.capabilities & kClientSecureConnection) != 0) {
    uint8_t length = 0;
    if (!r.Int1(&length) || !r.Bytes(length, &auth)) return Malformed("truncated auth response");
  } else if (!OptionalNulString(r, &auth)) {
    return Malformed("truncated auth response");
  }
  out.auth_response = std::string(auth);
  if ((out.capabilities & kClientConnectWithDb) != 0) {
    std::string_view db;
    OptionalNulString(r, &db);
    if (!db.empty()) out.database = std::string(db);
  }
  if ((out.capabilities & kClientPluginAuth) != 0) {
    std::string_view plugin;
    OptionalNulString(r, &plugin);
    out.auth_plugin = std::string(plugin);
  }
  if ((out.capabilities & kClientConnectAttrs) != 0 && !r.done()) {
    uint64_t total = 0;
    std::string_view attrs;
    if (!r.LenEncInt(&total) || total > r.remaining() || !r.Bytes(total, &attrs)) {
      return Malformed("truncated connection attributes");
    }
    WireReader a(attrs);
    while (!a.done()) {
      std::string_view key;
      std::string_view value;
      if (!a.LenEncString(&key) || !a.LenEncString(&value)) {
        return Malformed("truncated connection attribute");
      }
      out.attributes.emplace_back(key, value);
    }
  }
  return out;
}

Result<HandshakeResponse> ParseChangeUser(std::string_view body, uint32_t capabilities) {
  WireReader r(body);
  HandshakeResponse out;
  out.capabilities = capabilities;
  std::string_view user;
  if (!r.NulString(&user))
    return Status::InvalidArgument("malformed COM_CHANGE_USER: unterminated user name");
  out.user = std::string(user);
  std::string_view auth;
  if ((capabilities & kClientSecureConnection) != 0) {
    uint8_t length = 0;
    if (!r.Int1(&length) || !r.Bytes(length, &auth)) {
      return Status::InvalidArgument("malformed COM_CHANGE_USER: truncated auth response");
    }
  } else if (!r.NulString(&auth)) {
    return Status::InvalidArgument("malformed COM_CHANGE_USER: unterminated auth response");
  }
  out.auth_response = std::string(auth);
  std::string_view db;
  OptionalNulString(r, &db);
  if (!db.empty()) out.database = std::string(db);
  uint16_t charset = 0;
  if (r.Int2(&charset)) out.charset = static_cast<uint8_t>(charset);
  if ((capabilities & kClientPluginAuth) != 0) {
    std::string_view plugin;
    OptionalNulString(r, &plugin);
    out.auth_plugin = std::string(plugin);
  }
  // Connection attributes may follow; they change nothing here.
  return out;
}

std::string BuildAuthSwitchRequest(std::string_view plugin, std::string_view scramble) {
  WireWriter w;
  w.Int1(0xfe).NulString(plugin).NulString(scramble);
  return w.Take();
}

std::string BuildOk(uint64_t affected_rows, uint16_t status, bool eof_header) {
  WireWriter w;
  w.Int1(eof_header ? 0xfe : 0x00).LenEncInt(affected_rows).LenEncInt(0).Int2(status).Int2(0);
  return w.Take();
}

std::string BuildErr(uint16_t code, std::string_view sqlstate, std::string_view message) {
  WireWriter w;
  w.Int1(0xff).Int2(code).Raw("#").Raw(sqlstate.substr(0, 5)).Raw(message);
  return w.Take();
}

std::string BuildEof(uint16_t status) {
  WireWriter w;
  w.Int1(0xfe).Int2(0).Int2(status);
  return w.Take();
}

Result<std::string> GenerateScramble() {
  std::array<unsigned char, kScrambleLength> bytes{};
  if (RAND_bytes(bytes.data(), static_cast<int>(bytes.size())) != 1) {
    return Status::Internal("the random number generator failed to produce a scramble");
  }
  std::string scramble(kScrambleLength, '\0');
  for (size_t i = 0; i < bytes.size(); ++i) {
    // Printable ASCII, as MySQL generates it: no NUL, no byte the client could mangle.
    scramble[i] = static_cast<char>(33 + bytes[i] % 94);
  }
  return scramble;
}

}  // namespace millrace::server
