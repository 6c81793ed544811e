package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"
)

// entry is the part of an OSV entry the index needs.
type entry struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	Affected []struct {
		Package struct {
			Name string `json:"name"`
		} `json:"package"`
	} `json:"affected"`
}

// moduleVulns is one element of index/modules.json: a module and the
// entries that affect some of its versions.
type moduleVulns struct {
	Path  string      `json:"path"`
	Vulns []vulnIndex `json:"vulns"`
}

type vulnIndex struct {
	ID       string    `json:"id"`
	Modified time.Time `json:"modified"`
	// No "fixed": it only lets govulncheck skip reading entries, which it
	// then filters by the version ranges in them anyway.
}

// writeDB indexes the OSV entries of src (<ID>.json files) into dst in
// govulncheck's file database layout: ID/<ID>.json, index/db.json (the
// newest modification; at least asOf, the data's own date, where the
// entries carry none) and index/modules.json. dst appears whole or not
// at all.
func writeDB(src, dst string, asOf time.Time) error {
	files, err := filepath.Glob(filepath.Join(src, "*.json"))
	if err != nil {
		return err
	}
	if len(files) == 0 {
		return fmt.Errorf("no OSV entries in %s", src)
	}
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	tmp, err := os.MkdirTemp(filepath.Dir(dst), ".tmp-vulndb-")
	if err != nil {
		return err
	}
	defer os.RemoveAll(tmp)
	for _, d := range []string{"ID", "index"} {
		if err := os.Mkdir(filepath.Join(tmp, d), 0o755); err != nil {
			return err
		}
	}
	modified := asOf.UTC()
	byModule := map[string][]vulnIndex{}
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			return err
		}
		var e entry
		if err := json.Unmarshal(raw, &e); err != nil {
			return fmt.Errorf("%s: %w", f, err)
		}
		if e.ID+".json" != filepath.Base(f) {
			return fmt.Errorf("%s holds entry %q", f, e.ID)
		}
		if e.Modified.After(modified) {
			modified = e.Modified
		}
		for _, a := range e.Affected {
			vulns := byModule[a.Package.Name]
			if !slices.ContainsFunc(vulns, func(v vulnIndex) bool { return v.ID == e.ID }) {
				byModule[a.Package.Name] = append(vulns, vulnIndex{ID: e.ID, Modified: e.Modified})
			}
		}
		if err := os.WriteFile(filepath.Join(tmp, "ID", e.ID+".json"), raw, 0o644); err != nil {
			return err
		}
	}
	var modules []moduleVulns
	for path, vulns := range byModule {
		slices.SortFunc(vulns, func(a, b vulnIndex) int { return strings.Compare(a.ID, b.ID) })
		modules = append(modules, moduleVulns{Path: path, Vulns: vulns})
	}
	slices.SortFunc(modules, func(a, b moduleVulns) int { return strings.Compare(a.Path, b.Path) })
	if err := writeJSON(filepath.Join(tmp, "index", "modules.json"), modules); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(tmp, "index", "db.json"), map[string]time.Time{"modified": modified}); err != nil {
		return err
	}
	return os.Rename(tmp, dst)
}

func writeJSON(path string, v any) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return os.WriteFile(path, b, 0o644)
}
