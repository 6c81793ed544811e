// Package query reads fields of JSON documents.
package query

import "github.com/tidwall/gjson"

// Name returns the document's name field.
func Name(doc string) string {
	return gjson.Get(doc, "name").String()
}
