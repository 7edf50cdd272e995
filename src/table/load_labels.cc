#include "table/load_labels.h"

#include "engine/database.h"

namespace millrace::table {

using engine::QuoteLiteral;

std::string RecordLabelSql(std::string_view database, std::string_view label,
                           std::string_view table, std::string_view user, int64_t now_us) {
  return "INSERT INTO __millrace.load_labels VALUES (" + QuoteLiteral(database) + ", " +
         QuoteLiteral(label) + ", " + QuoteLiteral(table) + ", " + QuoteLiteral(user) + ", " +
         std::to_string(now_us) + ")";
}

std::string LabelTablesSql(std::string_view database) {
  return "SELECT DISTINCT table_name FROM __millrace.load_labels WHERE database_name = " +
         QuoteLiteral(database);
}

std::string LabelRowsSql(std::string_view database, std::string_view label,
                         const std::vector<std::string>& tables) {
  std::string sql =
      "SELECT row_number() OVER (ORDER BY create_time_us, label) AS \"JobId\", label AS "
      "\"Label\", 'FINISHED' AS \"State\", 'ETL:100%; LOAD:100%' AS \"Progress\", 'INSERT' AS "
      "\"Type\", NULL::VARCHAR AS \"EtlInfo\", NULL::VARCHAR AS \"TaskInfo\", NULL::VARCHAR AS "
      "\"ErrorMsg\", CAST(make_timestamp(create_time_us) AS VARCHAR) AS \"CreateTime\", "
      "CAST(make_timestamp(create_time_us) AS VARCHAR) AS \"LoadFinishTime\", '' AS \"URL\", "
      "CAST(json_object('Table', table_name) AS VARCHAR) AS \"JobDetails\", user_name AS "
      "\"User\", '' AS \"Comment\" FROM __millrace.load_labels WHERE database_name = " +
      QuoteLiteral(database);
  std::string list;
  for (const std::string& table : tables)
    list += (list.empty() ? "" : ", ") + QuoteLiteral(table);
  sql += " AND table_name IN (" + (list.empty() ? std::string("NULL") : list) + ")";
  if (!label.empty()) sql += " AND label = " + QuoteLiteral(label);
  return sql + " ORDER BY create_time_us, label";
}

}  // namespace millrace::table
