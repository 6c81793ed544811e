package sariflog_test

import (
	"encoding/json"
	"testing"

	"github.com/acme/codescan-api/shared/sariflog"
)

func TestLocationOmitsTheRegionOfAWholeFile(t *testing.T) {
	for _, c := range []struct {
		uri  string
		line int
		want string
	}{
		{"a/b.go", 12, `{"physicalLocation":{"artifactLocation":{"uri":"a/b.go"},"region":{"startLine":12}}}`},
		{"a/b.go", 0, `{"physicalLocation":{"artifactLocation":{"uri":"a/b.go"}}}`},
		{"a/b.go", -3, `{"physicalLocation":{"artifactLocation":{"uri":"a/b.go"}}}`},
	} {
		b, err := json.Marshal(sariflog.At(c.uri, c.line))
		if err != nil || string(b) != c.want {
			t.Errorf("At(%q, %d) = %s, %v; want %s", c.uri, c.line, b, err, c.want)
		}
	}
}

func TestUrgenciesReadInSARIF(t *testing.T) {
	for _, c := range []struct{ urgency, level, severity string }{
		{"CR", "error", "9.5"}, {"HI", "error", "8.0"}, {"ME", "warning", "5.5"}, {"LO", "note", "2.0"}, {"", "note", "2.0"},
	} {
		if l, s := sariflog.Level(c.urgency), sariflog.SecuritySeverity(c.urgency); l != c.level || s != c.severity {
			t.Errorf("%q: level %q severity %q; want %q %q", c.urgency, l, s, c.level, c.severity)
		}
	}
	if got := sariflog.CWETags(79); len(got) != 2 || got[1] != "external/cwe/cwe-79" {
		t.Errorf("CWETags(79) = %v", got)
	}
}
