// The row images of MySQL's and MariaDB's row-based binary log: TABLE_MAP events (a table's
// columns and their types) and WRITE/UPDATE/DELETE_ROWS events (the rows), decoded into the
// change stream's values (change/change_value.h).
//
// Millrace decodes the row image itself: Connector/C 3.3's mariadb_rpl_extract_rows fails on
// CHAR, BINARY, ENUM and SET columns ("Malformed row data packet stream": it takes their length
// from the next column's metadata and reads no length prefix), refuses a table whose columns
// have no metadata at all (only integers, DATE, YEAR: "Missing table map metadata"), reads
// every column whatever the present-columns bitmap says, and gives a negative TIME with a
// fraction wrongly ('-12:34:56.78' comes out as -12:34:57 and 1780000 microseconds).
//
// Contract
// - Input is plain bytes, so the decoders run without a server. SplitTableMapEvent and
//   SplitRowsEvent cut an event's body (the bytes after the 19-byte event header, without the
//   4-byte checksum) into the parts DecodeTableMap and DecodeRows read; a stream that has the
//   parts already (Connector/C's MARIADB_RPL_EVENT) fills TableMapBytes / RowsBytes itself.
// - DecodeTableMap needs the optional metadata of binlog_row_metadata = FULL: the column names
//   (FAILED_PRECONDITION naming the setting when they are missing), signedness, character sets
//   and ENUM/SET strings. A column type Millrace does not decode (the pre-5.0 DECIMAL, a
//   character set other than binary, latin1, ascii, utf8mb3 and utf8mb4) is NOT_SUPPORTED
//   naming the column. BinlogColumn::type is the real type: ENUM and SET, which the binlog writes
//   as STRING, are kTypeEnum / kTypeSet. BinlogColumn::metadata is the type's metadata as one
//   number: STRING/ENUM/SET the field length in bytes (for ENUM and SET the bytes of the stored
//   index or bitmask), VARCHAR the maximum length in bytes, NEWDECIMAL precision << 8 | scale,
//   BIT bytes << 8 | bits past the last full byte, BLOB/TEXT/JSON/GEOMETRY the bytes of the
//   length prefix, FLOAT/DOUBLE the value's size, DATETIME2/TIMESTAMP2/TIME2 the fractional
//   digits; 0 for the rest.
// - DecodeRows gives one RowChange per row of the event: WRITE fills `after`, DELETE `before`,
//   UPDATE both. A tuple has a value per column of the table: a column the image leaves out (its
//   bit clear in the present-columns bitmap, as binlog_row_image = MINIMAL or NOBLOB writes) is
//   UNCHANGED. Value text, as the mapping's ValueSql casts it in DuckDB:
//     integers            decimal, UNSIGNED columns read unsigned
//     DECIMAL(p,s)        the exact decimal, s fractional digits
//     FLOAT, DOUBLE       the shortest text that reads back as the same float / double
//     BIT(n)              the bits as an unsigned integer
//     DATE                'YYYY-MM-DD'
//     DATETIME(fsp)       'YYYY-MM-DD HH:MM:SS[.f]' with fsp fractional digits
//     TIMESTAMP(fsp)      'YYYY-MM-DD HH:MM:SS[.f]+00' in UTC (the binlog holds epoch seconds)
//     TIME(fsp)           '[-]HH:MM:SS[.f]', hours up to 838 (MySQL's TIME is a duration)
//     YEAR                the four-digit year, '0000' for the zero year
//     CHAR, VARCHAR, TEXT UTF-8 text: utf8mb3/utf8mb4/ascii as stored, latin1 (MySQL's latin1,
//                         which is cp1252) converted
//     BINARY, VARBINARY, BLOB, GEOMETRY  '\x' and lower-case hex (ValueForm::kBytea); BINARY(n)
//                         padded with zero bytes to n, as the server returns it
//     ENUM                the member's string, '' for the error value 0
//     SET                 the members' strings joined by ','
//     JSON                MariaDB stores it as LONGTEXT: the text as it is. MySQL 8's binary
//                         JSON (type 245) as JSON text (", " and ": " between items, as MySQL
//                         prints it; an empty value is null); of the MySQL values a document
//                         can hold beyond JSON's own, DECIMAL, DATE, DATETIME, TIMESTAMP and
//                         TIME are read (the temporal ones as strings), others are DATA_LOSS
//   The zero date '0000-00-00', a date with a zero month or day, and the zero DATETIME and
//   TIMESTAMP are NULL: no DuckDB date or timestamp holds them.
// - Malformed bytes (cut short, a bitmap of the wrong size, a value out of its type's range)
//   are DATA_LOSS naming the column and its type. Errors are values, never exceptions.
// - MapColumn gives the DuckDB type, the Doris type a created target declares, and the form of
//   the text above for a column.
// - Thread-safety: pure functions over values.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "change/change_value.h"
#include "common/mysql_field_type.h"
#include "common/result.h"

namespace millrace::mysql {

// Column types as the binlog writes them (common/mysql_field_type.h).
using enum mysql_wire::FieldType;

// Collation numbers that matter to decoding.
inline constexpr uint32_t kBinaryCollation = 63;

struct BinlogColumn {
  std::string name;
  uint8_t type = 0;       // the real type, see the contract
  uint16_t metadata = 0;  // see the contract
  bool is_unsigned = false;
  bool nullable = true;
  std::vector<std::string> enum_values;  // an ENUM's or SET's members, in order, in UTF-8
  uint32_t charset = 0;  // the collation number of a character, ENUM or SET column; else 0
};

struct BinlogTable {
  uint64_t table_id = 0;
  std::string schema;
  std::string name;
  std::vector<BinlogColumn> columns;
  std::vector<size_t> key;  // the primary key's columns, in key order; empty without one
};

// The parts of a TABLE_MAP event. The views point into the caller's bytes.
struct TableMapBytes {
  uint64_t table_id = 0;
  std::string schema;
  std::string name;
  std::string_view column_types;       // one byte a column
  std::string_view metadata;           // the per-column metadata block
  std::string_view null_bitmap;        // a bit a column, set when the column may be NULL
  std::string_view optional_metadata;  // the type-length-value fields after the bitmap
  // MariaDB counts YEAR among the numeric columns of the SIGNEDNESS field and MySQL does not:
  // the server's flavour, from the FORMAT_DESCRIPTION event's server version.
  bool mariadb = true;
};

enum class RowsKind { kWrite, kUpdate, kDelete };

// The parts of a WRITE/UPDATE/DELETE_ROWS event. The views point into the caller's bytes.
struct RowsBytes {
  RowsKind kind = RowsKind::kWrite;
  uint64_t table_id = 0;
  uint16_t flags = 0;  // bit 0: the statement's last event
  size_t column_count = 0;
  std::string_view columns;        // the image's present columns (UPDATE: the before image's)
  std::string_view after_columns;  // UPDATE only: the after image's present columns
  std::string_view rows;           // the row images, one after another
};

struct RowChange {
  change::Tuple before;  // DELETE and UPDATE
  change::Tuple after;   // WRITE and UPDATE
};

// `body`: the event after its 19-byte header, without the checksum.
Result<TableMapBytes> SplitTableMapEvent(std::string_view body, bool mariadb);
// `event_type`: 23-25 (ROWS_EVENT_V1, MariaDB's and MySQL 5.5's) or 30-32 (MySQL's version 2).
// MariaDB's compressed rows events (166-171) are NOT_SUPPORTED.
Result<RowsBytes> SplitRowsEvent(uint8_t event_type, std::string_view body);

Result<BinlogTable> DecodeTableMap(const TableMapBytes& bytes);
Result<std::vector<RowChange>> DecodeRows(const BinlogTable& table, const RowsBytes& rows);

change::TypeMapping MapColumn(const BinlogColumn& column);

}  // namespace millrace::mysql
