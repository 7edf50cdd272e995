// The driver script, through MariaDB Connector/J 2.7 (Debian libmariadb-java) with
// useServerPrepStmts=true: connect, metadata (DatabaseMetaData getTables, getColumns,
// getPrimaryKeys as a BI tool calls them), create, insert with bound parameters of every type
// and NULL, select them back typed, one prepared statement executed many times, a transaction
// rolled back, an error with its code.
//
// Usage: java -Duser.timezone=UTC -cp <classes>:<mariadb-java-client.jar> JavaClient <port>.
// Prints "ok" and exits 0, or names what failed and exits 1.
import java.math.BigDecimal;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.Date;
import java.sql.DriverManager;
import java.sql.PreparedStatement;
import java.sql.ResultSet;
import java.sql.ResultSetMetaData;
import java.sql.SQLException;
import java.sql.Statement;
import java.sql.Timestamp;
import java.sql.Types;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

public class JavaClient {
  static void check(boolean ok, String what, Object got) {
    if (!ok) throw new IllegalStateException("failed: " + what + " (got " + got + ")");
  }

  static long count(Connection conn) throws SQLException {
    try (Statement s = conn.createStatement();
        ResultSet rs = s.executeQuery("SELECT count(*) FROM java_t")) {
      rs.next();
      return rs.getLong(1);
    }
  }

  public static void main(String[] args) throws Exception {
    String url = "jdbc:mariadb://127.0.0.1:" + args[0] + "/?user=root&useServerPrepStmts=true";
    try (Connection conn = DriverManager.getConnection(url)) {
      try (Statement s = conn.createStatement()) {
        s.execute("CREATE DATABASE IF NOT EXISTS drivers");
        s.execute("USE drivers");
        s.execute("CREATE TABLE java_t (id INT PRIMARY KEY, i BIGINT, d DOUBLE, s VARCHAR(50), "
            + "b BLOB, dt DATE, ts DATETIME(6), n DECIMAL(10,2), f BOOLEAN)");
      }

      // Metadata as a BI tool reads it.
      DatabaseMetaData meta = conn.getMetaData();
      List<String> tables = new ArrayList<>();
      try (ResultSet rs = meta.getTables("drivers", null, "%", new String[] {"TABLE"})) {
        while (rs.next()) tables.add(rs.getString("TABLE_NAME"));
      }
      check(tables.contains("java_t"), "getTables lists java_t", tables);
      List<String> columns = new ArrayList<>();
      List<Integer> types = new ArrayList<>();
      int scale = -1;
      int nullable = -1;
      try (ResultSet rs = meta.getColumns("drivers", null, "java_t", "%")) {
        while (rs.next()) {
          columns.add(rs.getString("COLUMN_NAME"));
          types.add(rs.getInt("DATA_TYPE"));
          if (rs.getString("COLUMN_NAME").equals("n")) scale = rs.getInt("DECIMAL_DIGITS");
          if (rs.getString("COLUMN_NAME").equals("id")) nullable = rs.getInt("NULLABLE");
        }
      }
      check(columns.equals(Arrays.asList("id", "i", "d", "s", "b", "dt", "ts", "n", "f")),
          "getColumns names in order", columns);
      check(types.equals(Arrays.asList(Types.INTEGER, Types.BIGINT, Types.DOUBLE,
                Types.LONGVARCHAR, Types.LONGVARBINARY, Types.DATE, Types.TIMESTAMP,
                Types.DECIMAL, Types.BIT)),
          "getColumns types", types);
      check(scale == 2, "getColumns DECIMAL_DIGITS of DECIMAL(10,2)", scale);
      check(nullable == DatabaseMetaData.columnNoNulls, "getColumns: the key is NOT NULL", nullable);
      List<String> keys = new ArrayList<>();
      try (ResultSet rs = meta.getPrimaryKeys("drivers", null, "java_t")) {
        while (rs.next()) keys.add(rs.getString("COLUMN_NAME") + ":" + rs.getInt("KEY_SEQ"));
      }
      check(keys.equals(Arrays.asList("id:1")), "getPrimaryKeys", keys);

      // Bound parameters of every type, and NULLs.
      String insert = "INSERT INTO java_t VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)";
      try (PreparedStatement p = conn.prepareStatement(insert)) {
        p.setInt(1, 1);
        p.setLong(2, 9007199254740993L);
        p.setDouble(3, 2.5);
        p.setString(4, "it's \\ é");
        p.setBytes(5, new byte[] {0, (byte) 255, 16});
        p.setDate(6, Date.valueOf("2024-02-29"));
        p.setTimestamp(7, Timestamp.valueOf("1999-12-31 23:59:58.123456"));
        p.setBigDecimal(8, new BigDecimal("-12.34"));
        p.setBoolean(9, true);
        p.executeUpdate();
        p.setInt(1, 2);
        for (int k = 2; k <= 9; ++k) p.setNull(k, Types.NULL);
        p.executeUpdate();
      }
      try (PreparedStatement p =
              conn.prepareStatement("SELECT * FROM java_t WHERE id >= ? ORDER BY id")) {
        p.setInt(1, 1);
        try (ResultSet rs = p.executeQuery()) {
          ResultSetMetaData rm = rs.getMetaData();
          check(rm.getColumnType(1) == Types.INTEGER, "result type of INT", rm.getColumnType(1));
          check(rm.getColumnType(8) == Types.DECIMAL && rm.getScale(8) == 2,
              "result type of DECIMAL(10,2)", rm.getColumnType(8) + "/" + rm.getScale(8));
          check(rs.next(), "first row", null);
          check(rs.getInt("id") == 1, "INT", rs.getInt("id"));
          check(rs.getLong("i") == 9007199254740993L, "BIGINT", rs.getLong("i"));
          check(rs.getDouble("d") == 2.5, "DOUBLE", rs.getDouble("d"));
          check(rs.getString("s").equals("it's \\ é"), "VARCHAR", rs.getString("s"));
          check(Arrays.equals(rs.getBytes("b"), new byte[] {0, (byte) 255, 16}), "BLOB",
              Arrays.toString(rs.getBytes("b")));
          check(rs.getDate("dt").toString().equals("2024-02-29"), "DATE", rs.getDate("dt"));
          check(rs.getTimestamp("ts").equals(Timestamp.valueOf("1999-12-31 23:59:58.123456")),
              "DATETIME(6)", rs.getTimestamp("ts"));
          check(rs.getBigDecimal("n").equals(new BigDecimal("-12.34")), "DECIMAL",
              rs.getBigDecimal("n"));
          check(rs.getBoolean("f"), "BOOLEAN", rs.getObject("f"));
          check(rs.next(), "second row", null);
          for (int k = 2; k <= 9; ++k) {
            check(rs.getObject(k) == null, "NULL in column " + k, rs.getObject(k));
          }
          check(!rs.next(), "two rows", null);
        }
      }

      // One statement, many executions.
      try (PreparedStatement p = conn.prepareStatement("INSERT INTO java_t (id) VALUES (?)")) {
        for (int k = 0; k < 200; ++k) {
          p.setInt(1, 100 + k);
          p.executeUpdate();
        }
      }
      check(count(conn) == 202, "count after 200 executions", count(conn));

      // A transaction rolled back leaves nothing.
      conn.setAutoCommit(false);
      try (PreparedStatement p = conn.prepareStatement("DELETE FROM java_t WHERE id >= ?")) {
        p.setInt(1, 100);
        check(p.executeUpdate() == 200, "DELETE in the transaction", null);
      }
      conn.rollback();
      conn.setAutoCommit(true);
      check(count(conn) == 202, "count after rollback", count(conn));

      // An error keeps its code and SQLSTATE, and the connection goes on.
      int code = 0;
      String state = "";
      try (PreparedStatement p =
              conn.prepareStatement("SELECT * FROM no_such_table WHERE x = ?")) {
        p.setInt(1, 1);
        p.executeQuery();
      } catch (SQLException e) {
        code = e.getErrorCode();
        state = e.getSQLState();
      }
      check(code == 1146 && state.equals("42S02"), "error 1146/42S02 for a missing table",
          code + "/" + state);
      check(count(conn) == 202, "the connection goes on", null);
    }
    System.out.println("ok");
  }
}
