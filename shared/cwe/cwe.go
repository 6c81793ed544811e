// Package cwe is MITRE's CWE catalogue (weaknesses and categories with their
// names and descriptions), embedded so the API names weakness classes without
// any lookup at run time. The data comes from the catalogue XML shipped by
// the npm package cwe-sdk; ./gen documents what is kept.
package cwe

import (
	"bufio"
	"bytes"
	"compress/gzip"
	_ "embed"
	"fmt"
	"io"
	"strconv"
	"strings"
	"sync"
)

//go:generate npm install --prefix ../../.local/npm-cwe --no-audit --no-fund --loglevel=error cwe-sdk@1.1.19
//go:generate go run ./gen -in ../../.local/npm-cwe/node_modules/cwe-sdk/raw/cwe-archive.xml -out catalogue.tsv.gz

// Version is the CWE catalogue version embedded (the XML's Version attribute).
const Version = "4.15"

// Entry is one weakness or category of the catalogue.
type Entry struct {
	ID          int
	Name        string
	Description string
}

//go:embed catalogue.tsv.gz
var data []byte

// catalogue is decoded on first use, so cold starts that never look a CWE up
// don't pay for it. The embedded file is checked by the tests, so failing to
// read it is a build defect.
var catalogue = sync.OnceValue(func() map[int]Entry {
	m, err := decode(bytes.NewReader(data))
	if err != nil {
		panic("cwe: embedded catalogue: " + err.Error())
	}
	return m
})

// Lookup returns the catalogue entry of id.
func Lookup(id int) (Entry, bool) {
	e, ok := catalogue()[id]
	return e, ok
}

// Parse reads a CWE id written "CWE-79", "cwe-79" or "79" (surrounding
// space ignored). It only checks the syntax: the id need not be in the
// catalogue. Zero, signs and anything else but digits are rejected.
func Parse(s string) (int, bool) {
	s = strings.TrimSpace(s)
	if len(s) > 4 && strings.EqualFold(s[:4], "CWE-") {
		s = s[4:]
	}
	if s == "" || strings.TrimLeft(s, "0123456789") != "" {
		return 0, false
	}
	id, err := strconv.Atoi(s)
	if err != nil || id == 0 {
		return 0, false
	}
	return id, true
}

// FormatID writes id the canonical way, e.g. "CWE-79".
func FormatID(id int) string { return "CWE-" + strconv.Itoa(id) }

// decode reads the format written by ./gen: gzip'd lines, the first being
// the catalogue version, then "id\tname\tdescription".
func decode(r io.Reader) (map[int]Entry, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, err
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(nil, 1<<20)
	if !sc.Scan() {
		return nil, fmt.Errorf("no version line: %v", sc.Err())
	}
	if v := sc.Text(); v != Version {
		return nil, fmt.Errorf("catalogue version %q, package says %q", v, Version)
	}
	m := make(map[int]Entry)
	for sc.Scan() {
		idText, rest, ok1 := strings.Cut(sc.Text(), "\t")
		name, desc, ok2 := strings.Cut(rest, "\t")
		id, err := strconv.Atoi(idText)
		if !ok1 || !ok2 || err != nil || id <= 0 {
			return nil, fmt.Errorf("bad line %q", sc.Text())
		}
		m[id] = Entry{ID: id, Name: name, Description: desc}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return m, zr.Close()
}
