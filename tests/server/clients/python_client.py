"""The driver script through Python's mysqlclient (MySQLdb) or PyMySQL: connect, metadata,
create, insert with parameters of every type and NULL, select them back typed, one statement
executed many times, a transaction rolled back, an error with its code. These drivers put the
parameters into the statement text themselves (the text protocol).

Usage: python3 python_client.py mysqldb|pymysql <port>. Prints "ok" and exits 0, or names what
failed and exits 1.
"""
import datetime
import decimal
import sys

from driver_common import check, run



def main():
    driver, port = sys.argv[1], int(sys.argv[2])
    if driver == "mysqldb":
        import MySQLdb as db
        conn = db.connect(host="127.0.0.1", port=port, user="root", passwd="", charset="utf8mb4")
        error_code = lambda e: e.args[0]
    else:
        import pymysql as db
        conn = db.connect(host="127.0.0.1", port=port, user="root", password="", charset="utf8mb4")
        error_code = lambda e: e.args[0]
    cur = conn.cursor()
    cur.execute("CREATE DATABASE IF NOT EXISTS drivers")
    cur.execute("USE drivers")
    table = "py_" + driver
    cur.execute("CREATE TABLE %s (id INT, i BIGINT, d DOUBLE, s VARCHAR(50), b BLOB, dt DATE, "
                "ts DATETIME(6), n DECIMAL(10,2))" % table)
    cur.execute("SHOW TABLES")
    check(table in [r[0] for r in cur.fetchall()], "SHOW TABLES lists " + table)

    insert = "INSERT INTO %s VALUES (%%s, %%s, %%s, %%s, %%s, %%s, %%s, %%s)" % table
    cur.execute(insert, (1, 9007199254740993, 2.5, "it's \\ é", b"bytes",
                         datetime.date(2024, 2, 29),
                         datetime.datetime(1999, 12, 31, 23, 59, 58, 123000),
                         decimal.Decimal("-12.34")))
    cur.execute(insert, (2, None, None, None, None, None, None, None))
    conn.commit()
    cur.execute("SELECT * FROM %s WHERE id >= %%s ORDER BY id" % table, (1,))
    rows = cur.fetchall()
    check(len(rows) == 2, "two rows", rows)
    r = rows[0]
    check(r[0] == 1 and r[1] == 9007199254740993 and r[2] == 2.5, "numbers", r)
    check(r[3] == "it's \\ é", "VARCHAR", r[3])
    check(bytes(r[4]) == b"bytes", "BLOB", r[4])
    check(r[5] == datetime.date(2024, 2, 29), "DATE", r[5])
    check(r[6] == datetime.datetime(1999, 12, 31, 23, 59, 58, 123000), "DATETIME", r[6])
    check(r[7] == decimal.Decimal("-12.34"), "DECIMAL", r[7])
    check(all(v is None for v in rows[1][1:]), "NULLs", rows[1])

    cur.executemany("INSERT INTO %s (id) VALUES (%%s)" % table, [(100 + k,) for k in range(200)])
    conn.commit()
    cur.execute("SELECT count(*) FROM " + table)
    check(cur.fetchone()[0] == 202, "count after 200 executions")

    cur.execute("START TRANSACTION")
    cur.execute("DELETE FROM %s WHERE id >= %%s" % table, (100,))
    conn.rollback()
    cur.execute("SELECT count(*) FROM " + table)
    check(cur.fetchone()[0] == 202, "count after ROLLBACK")

    code = 0
    try:
        cur.execute("SELECT * FROM no_such_table WHERE x = %s", (1,))
    except db.Error as e:
        code = error_code(e)
    check(code == 1146, "error 1146 for a missing table", code)
    cur.execute("SELECT 1")
    check(cur.fetchone()[0] == 1, "the connection goes on")
    conn.close()


if __name__ == "__main__":
    run(main)
