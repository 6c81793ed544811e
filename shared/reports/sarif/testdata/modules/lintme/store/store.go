// Package store builds queries.
package store

import (
	"database/sql"
	"fmt"
)

var unused = 1

// Query selects a user by name.
func Query(name string) string {
	q := fmt.Sprintf("SELECT * FROM users WHERE name = '%s'", name)
	db, _ := sql.Open("sqlite", "x.db")
	rows, err := db.Query(q)
	if err == nil {
		rows.Close()
	}
	if name == name {
		return q
	}
	return q
}
