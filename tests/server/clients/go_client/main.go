// The driver script through Go's database/sql with go-sql-driver/mysql: connect, metadata,
// create, insert with bound parameters of every type and NULL, select them back typed, one
// prepared statement executed many times, a transaction rolled back, an error with its code.
// Without interpolateParams the driver prepares on the server (the binary protocol); with it,
// it puts the values into the text itself.
//
// Usage: go_client <port> <interpolateParams: true|false>. Prints "ok" and exits 0, or names
// what failed and exits 1.
package main

import (
	"bytes"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/go-sql-driver/mysql"
)

func check(ok bool, what string, got interface{}) {
	if !ok {
		fmt.Fprintf(os.Stderr, "failed: %s (got %v)\n", what, got)
		os.Exit(1)
	}
}

func must(err error, what string) {
	if err != nil {
		fmt.Fprintf(os.Stderr, "failed: %s: %v\n", what, err)
		os.Exit(1)
	}
}

func main() {
	port, interpolate := os.Args[1], os.Args[2]
	db, err := sql.Open("mysql", "root:@tcp(127.0.0.1:"+port+")/?parseTime=true&loc=UTC&interpolateParams="+interpolate)
	must(err, "open")
	defer db.Close()
	db.SetMaxOpenConns(1) // one session: USE and transactions stay on it
	_, err = db.Exec("CREATE DATABASE IF NOT EXISTS drivers")
	must(err, "create database")
	_, err = db.Exec("USE drivers")
	must(err, "use")
	table := "go_" + interpolate
	_, err = db.Exec("CREATE TABLE " + table + " (id INT, i BIGINT, d DOUBLE, s VARCHAR(50), b BLOB, dt DATE, ts DATETIME(6), n DECIMAL(10,2))")
	must(err, "create table")
	rows, err := db.Query("SHOW TABLES")
	must(err, "show tables")
	found := false
	for rows.Next() {
		var name string
		must(rows.Scan(&name), "scan table name")
		found = found || name == table
	}
	rows.Close()
	check(found, "SHOW TABLES lists "+table, nil)

	insert := "INSERT INTO " + table + " VALUES (?, ?, ?, ?, ?, ?, ?, ?)"
	ts := time.Date(1999, 12, 31, 23, 59, 58, 123456000, time.UTC)
	// Interpolated bytes go into the statement's text as they are: there they must be UTF-8
	// (docs/sql_server.md); bound ones may be anything.
	blob := []byte{0, 255, 16}
	if interpolate == "true" {
		blob = []byte("bytes")
	}
	_, err = db.Exec(insert, 1, int64(9007199254740993), 2.5, "it's \\ é", blob,
		time.Date(2024, 2, 29, 0, 0, 0, 0, time.UTC), ts, "-12.34")
	must(err, "insert values")
	_, err = db.Exec(insert, 2, nil, nil, nil, nil, nil, nil, nil)
	must(err, "insert NULLs")

	rows, err = db.Query("SELECT id, i, d, s, b, dt, ts, n FROM "+table+" WHERE id >= ? ORDER BY id", 1)
	must(err, "select")
	var (
		id        int
		i         sql.NullInt64
		d         sql.NullFloat64
		s         sql.NullString
		b         []byte
		dt, tsOut sql.NullTime
		n         sql.NullString
	)
	check(rows.Next(), "first row", nil)
	must(rows.Scan(&id, &i, &d, &s, &b, &dt, &tsOut, &n), "scan first row")
	check(id == 1 && i.Int64 == 9007199254740993 && d.Float64 == 2.5, "numbers", []interface{}{id, i, d})
	check(s.String == "it's \\ é", "VARCHAR", s)
	check(bytes.Equal(b, blob), "BLOB", b)
	check(dt.Valid && dt.Time.Format("2006-01-02") == "2024-02-29", "DATE", dt)
	check(tsOut.Valid && tsOut.Time.Equal(ts), "DATETIME", tsOut)
	check(n.String == "-12.34", "DECIMAL", n)
	check(rows.Next(), "second row", nil)
	must(rows.Scan(&id, &i, &d, &s, &b, &dt, &tsOut, &n), "scan second row")
	check(id == 2 && !i.Valid && !d.Valid && !s.Valid && b == nil && !dt.Valid && !tsOut.Valid && !n.Valid, "NULLs", nil)
	rows.Close()

	stmt, err := db.Prepare("INSERT INTO " + table + " (id) VALUES (?)")
	must(err, "prepare")
	for k := 0; k < 200; k++ {
		_, err = stmt.Exec(100 + k)
		must(err, "execute many")
	}
	stmt.Close()
	var count int
	must(db.QueryRow("SELECT count(*) FROM "+table).Scan(&count), "count")
	check(count == 202, "count after 200 executions", count)

	tx, err := db.Begin()
	must(err, "begin")
	_, err = tx.Exec("DELETE FROM "+table+" WHERE id >= ?", 100)
	must(err, "delete in transaction")
	must(tx.Rollback(), "rollback")
	must(db.QueryRow("SELECT count(*) FROM "+table).Scan(&count), "count after rollback")
	check(count == 202, "count after ROLLBACK", count)

	_, err = db.Query("SELECT * FROM no_such_table WHERE x = ?", 1)
	var myErr *mysql.MySQLError
	check(errors.As(err, &myErr) && myErr.Number == 1146, "error 1146 for a missing table", err)
	var one int
	must(db.QueryRow("SELECT 1").Scan(&one), "the connection goes on")
	fmt.Println("ok")
}
