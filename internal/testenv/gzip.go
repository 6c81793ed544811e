package testenv

import (
	"bytes"
	"compress/gzip"
	"testing"
)

// Gzip returns b gzip-compressed, as a client sends a Content-Encoding:
// gzip body or a .gz report.
func Gzip(t testing.TB, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	if _, err := zw.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := zw.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}
