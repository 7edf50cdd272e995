"""SQLAlchemy reflection as BI tools use it: table names, columns and primary key of a table made
with a plain PRIMARY KEY, and of a Doris UNIQUE KEY table (SQLAlchemy parses SHOW CREATE TABLE as
MySQL DDL: it reads the Doris table's columns, and no primary key from UNIQUE KEY(...)).

Usage: python3 sqlalchemy_reflect.py mysqldb|pymysql <port>. Prints "ok" and exits 0, or names
what failed and exits 1.
"""
import sys
import warnings

from driver_common import check, run
from sqlalchemy import create_engine, inspect, text



def main():
    warnings.simplefilter("ignore")
    driver, port = sys.argv[1], int(sys.argv[2])
    engine = create_engine("mysql+%s://root:@127.0.0.1:%d/" % (driver, port))
    plain, doris = "sa_plain_" + driver, "sa_doris_" + driver
    with engine.connect() as conn:
        conn.execute(text("CREATE DATABASE IF NOT EXISTS reflect"))
        conn.execute(text("CREATE TABLE reflect.%s (id INT PRIMARY KEY, name VARCHAR(20) NOT "
                          "NULL, amount DECIMAL(10,2))" % plain))
        conn.execute(text("CREATE TABLE reflect.%s (id INT, name VARCHAR(20), amount "
                          "DECIMAL(10,2)) UNIQUE KEY(id) DISTRIBUTED BY HASH(id) BUCKETS 1" % doris))
    insp = inspect(engine)
    names = insp.get_table_names(schema="reflect")
    check(plain in names and doris in names, "get_table_names", names)
    for table, pk in ((plain, ["id"]), (doris, [])):
        columns = insp.get_columns(table, schema="reflect")
        check([c["name"] for c in columns] == ["id", "name", "amount"], table + " columns", columns)
        amount = columns[2]["type"]
        check((amount.precision, amount.scale) == (10, 2), table + " DECIMAL(10,2)", amount)
        check(columns[2]["nullable"], table + " amount nullable", columns[2])
        got = insp.get_pk_constraint(table, schema="reflect")["constrained_columns"]
        check(got == pk, table + " primary key", got)
    check(not insp.get_columns(plain, schema="reflect")[1]["nullable"], "NOT NULL name")


if __name__ == "__main__":
    run(main)
