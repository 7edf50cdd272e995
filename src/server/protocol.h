// Internal to the server module: the MySQL client/server protocol messages Millrace speaks
// (protocol 4.1, text protocol), built and parsed as payloads without framing (packet.h).
//
// Contract
// - Builders cannot fail. ParseHandshakeResponse reads untrusted bytes: every length is
//   checked, and any truncated or inconsistent field is INVALID_ARGUMENT (never a crash or an
//   over-read).
// - Authentication is mysql_native_password (access/password.h): the client proves knowledge of
//   the password with SHA1(password) XOR SHA1(scramble + SHA1(SHA1(password))); the password
//   never travels. The server asks its Authenticator (authenticator.h).
// - Thread-safety: pure functions (GenerateScramble uses OpenSSL's thread-safe RNG).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "common/result.h"

namespace millrace::server {

// Capability flags
// (https://dev.mysql.com/doc/dev/mysql-server/latest/group__group__cs__capabilities__flags.html).
inline constexpr uint32_t kClientLongPassword = 1;
inline constexpr uint32_t kClientFoundRows = 1u << 1;
inline constexpr uint32_t kClientLongFlag = 1u << 2;
inline constexpr uint32_t kClientConnectWithDb = 1u << 3;
inline constexpr uint32_t kClientProtocol41 = 1u << 9;
inline constexpr uint32_t kClientInteractive = 1u << 10;
inline constexpr uint32_t kClientSsl = 1u << 11;
inline constexpr uint32_t kClientTransactions = 1u << 13;
inline constexpr uint32_t kClientSecureConnection = 1u << 15;
inline constexpr uint32_t kClientMultiStatements = 1u << 16;
inline constexpr uint32_t kClientMultiResults = 1u << 17;
inline constexpr uint32_t kClientPluginAuth = 1u << 19;
inline constexpr uint32_t kClientConnectAttrs = 1u << 20;
inline constexpr uint32_t kClientPluginAuthLenencData = 1u << 21;
inline constexpr uint32_t kClientDeprecateEof = 1u << 24;

// What Millrace offers (plus kClientSsl when a certificate is configured); the session uses
// the intersection with the client's flags.
inline constexpr uint32_t kServerCapabilities =
    kClientLongPassword | kClientFoundRows | kClientLongFlag | kClientConnectWithDb |
    kClientProtocol41 | kClientInteractive | kClientTransactions | kClientSecureConnection |
    kClientMultiStatements | kClientMultiResults | kClientPluginAuth | kClientConnectAttrs |
    kClientPluginAuthLenencData | kClientDeprecateEof;

// Server status flags.
inline constexpr uint16_t kServerStatusInTrans = 1;
inline constexpr uint16_t kServerStatusAutocommit = 2;
inline constexpr uint16_t kServerMoreResultsExists = 8;
// Strings are DuckDB's, where a backslash is an ordinary character: with this flag client
// libraries (mysql_real_escape_string, PyMySQL...) escape quotes by doubling them.
inline constexpr uint16_t kServerStatusNoBackslashEscapes = 0x200;

// Command bytes.
inline constexpr uint8_t kComQuit = 0x01;
inline constexpr uint8_t kComInitDb = 0x02;
inline constexpr uint8_t kComQuery = 0x03;
inline constexpr uint8_t kComPing = 0x0e;
inline constexpr uint8_t kComFieldList = 0x04;
inline constexpr uint8_t kComStatistics = 0x09;
inline constexpr uint8_t kComProcessKill = 0x0c;
inline constexpr uint8_t kComChangeUser = 0x11;
inline constexpr uint8_t kComSetOption = 0x1b;
inline constexpr uint8_t kComResetConnection = 0x1f;

// ER_SECURE_TRANSPORT_REQUIRED (SQLSTATE HY000): a plain connection under --require-tls.
inline constexpr uint16_t kErSecureTransportRequired = 3159;

inline constexpr std::string_view kNativePasswordPlugin = "mysql_native_password";
inline constexpr size_t kScrambleLength = 20;

// "COM_STMT_PREPARE" etc.; "COM_0x2a" for bytes MySQL does not define.
std::string CommandName(uint8_t command);

struct HandshakeResponse {
  // An SSL request: the 32-byte start of a response with kClientSsl, after which the client
  // starts TLS and sends the whole response encrypted. Only the fields up to charset are set.
  bool ssl_request = false;
  uint32_t capabilities = 0;
  uint32_t max_packet = 0;
  uint8_t charset = 0;
  std::string user;
  std::string auth_response;
  std::optional<std::string> database;
  std::string auth_plugin;  // empty when the client did not name one
  std::vector<std::pair<std::string, std::string>> attributes;
};

std::string BuildHandshakeV10(std::string_view server_version, uint32_t connection_id,
                              std::string_view scramble, uint32_t capabilities, uint16_t status);
// A handshake response or an SSL request (see HandshakeResponse::ssl_request).
Result<HandshakeResponse> ParseHandshakeResponse(std::string_view payload);
// The body of COM_CHANGE_USER (after the command byte), read with the connection's
// `capabilities`: user, auth_response, database, charset and auth_plugin are set.
Result<HandshakeResponse> ParseChangeUser(std::string_view body, uint32_t capabilities);
std::string BuildAuthSwitchRequest(std::string_view plugin, std::string_view scramble);

// OK packet; with `eof_header` it is the 0xFE-headed OK that ends a result set when
// CLIENT_DEPRECATE_EOF is in effect.
std::string BuildOk(uint64_t affected_rows, uint16_t status, bool eof_header = false);
std::string BuildErr(uint16_t code, std::string_view sqlstate, std::string_view message);
std::string BuildEof(uint16_t status);

// 20 random bytes without NUL (the client treats the scramble as a C string).
Result<std::string> GenerateScramble();

}  // namespace millrace::server
