// MySQL 8's binary JSON (the value of a JSON column, binlog type 245) as JSON text. MariaDB
// stores JSON as LONGTEXT and needs none of this.
//
// Contract
// - MySqlJsonText prints the document as MySQL prints it: ", " between items and ": " after a
//   key, strings escaped as JSON requires, doubles in their shortest text. An empty value is the
//   JSON null. Of the MySQL values a document can hold beyond JSON's own ("opaque"), DECIMAL is a
//   number and DATE, DATETIME, TIMESTAMP and TIME are strings (mysql_formats.h's text).
// - nullopt for bytes that are not such a document (cut short, a size or offset out of bounds, a
//   type byte or literal Millrace does not know, nesting deeper than 150) and for an opaque value
//   of another type. The caller names the column.
// - Thread-safety: pure function.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace millrace::mysql {

// A MySQL 8 JSON column's value as JSON text; nullopt for bytes that are not a document Millrace
// reads. An empty value is the JSON null.
std::optional<std::string> MySqlJsonText(std::string_view doc);

}  // namespace millrace::mysql
