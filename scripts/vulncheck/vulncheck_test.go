package main

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"testing"
	"time"
)

// writeDB indexes OSV entries as govulncheck reads them: one index entry
// per module and vulnerability, however many ranges name the module; the
// database as new as its newest entry, or as the data's date.
func TestWriteDB(t *testing.T) {
	dst := filepath.Join(t.TempDir(), "db")
	asOf := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	if err := writeDB("testdata/osv", dst, asOf); err != nil {
		t.Fatal(err)
	}
	var modules []moduleVulns
	readJSON(t, filepath.Join(dst, "index", "modules.json"), &modules)
	want := []moduleVulns{
		{Path: "example.com/unused", Vulns: []vulnIndex{{ID: "GO-0000-0002", Modified: time.Date(2025, 1, 1, 0, 0, 0, 0, time.UTC)}}},
		{Path: "stdlib", Vulns: []vulnIndex{{ID: "GO-0000-0001", Modified: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}}},
	}
	if !reflect.DeepEqual(modules, want) {
		t.Fatalf("modules.json: %+v, want %+v", modules, want)
	}
	var db struct{ Modified time.Time }
	readJSON(t, filepath.Join(dst, "index", "db.json"), &db)
	if !db.Modified.Equal(time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)) {
		t.Fatalf("db.json modified %v", db.Modified)
	}
	for _, id := range []string{"GO-0000-0001", "GO-0000-0002"} {
		got, err1 := os.ReadFile(filepath.Join(dst, "ID", id+".json"))
		src, err2 := os.ReadFile(filepath.Join("testdata", "osv", id+".json"))
		if err1 != nil || err2 != nil || string(got) != string(src) {
			t.Fatalf("ID/%s.json is not the entry: %v %v", id, err1, err2)
		}
	}
	// An entry under another file name is refused, and nothing is left.
	bad := t.TempDir()
	raw, _ := os.ReadFile("testdata/osv/GO-0000-0001.json")
	if err := os.WriteFile(filepath.Join(bad, "GO-0000-0009.json"), raw, 0o644); err != nil {
		t.Fatal(err)
	}
	out := filepath.Join(t.TempDir(), "db")
	if err := writeDB(bad, out, asOf); err == nil {
		t.Fatal("an entry filed under another id was indexed")
	}
	if _, err := os.Stat(out); !os.IsNotExist(err) {
		t.Fatalf("a failed index left %s: %v", out, err)
	}
}

// The check fails on a vulnerable symbol the code calls, and passes code
// that only imports its package: govulncheck on the indexed test database.
func TestScanFailsOnlyOnReachableVulnerability(t *testing.T) {
	db := filepath.Join(t.TempDir(), "db")
	if err := writeDB("testdata/osv", db, time.Time{}); err != nil {
		t.Fatal(err)
	}
	bin := t.TempDir()
	for dir, want := range map[string]int{"testdata/reaches": 3, "testdata/imports": 0} {
		code, err := scan(context.Background(), bin, db, dir, []string{"./..."})
		if err != nil || code != want {
			t.Errorf("govulncheck on %s: exit %d (%v), want %d", dir, code, err, want)
		}
	}
}

func readJSON(t *testing.T, path string, v any) {
	t.Helper()
	raw, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, v); err != nil {
		t.Fatal(err)
	}
}
