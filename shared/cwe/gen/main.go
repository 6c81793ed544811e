// Command gen turns MITRE's CWE catalogue XML into the compact file embedded
// by package cwe: gzip-compressed, tab-separated UTF-8 text whose first line
// is the catalogue version and every further line is "id\tname\tdescription",
// sorted by id.
//
// Weaknesses (description: their Description element) and categories (their
// Summary element) are kept, because scanners tag findings with both (e.g.
// CWE-79 and the category CWE-310). Views are left out: they are ways of
// browsing the catalogue, never the class of a finding. Deprecated and
// obsolete entries stay so old ids still resolve; MITRE's names say
// "DEPRECATED:" where that applies. Runs of white space, including line
// breaks and tabs, become one space so each entry fits on one line.
//
// Usage: go run ./gen -in cwe-archive.xml -out catalogue.tsv.gz
package main

import (
	"bufio"
	"compress/gzip"
	"encoding/xml"
	"errors"
	"flag"
	"fmt"
	"io"
	"log"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	in := flag.String("in", "", "catalogue XML (cwe-sdk's raw/cwe-archive.xml)")
	out := flag.String("out", "catalogue.tsv.gz", "file to write")
	flag.Parse()
	if err := run(*in, *out); err != nil {
		log.Fatal(err)
	}
}

// run writes through a temporary file so a failed run leaves the previous
// table in place.
func run(in, out string) error {
	src, err := os.Open(in)
	if err != nil {
		return err
	}
	defer src.Close()
	tmp, err := os.CreateTemp(filepath.Dir(out), ".catalogue-*")
	if err != nil {
		return err
	}
	defer os.Remove(tmp.Name())
	if err := convert(tmp, bufio.NewReader(src)); err != nil {
		tmp.Close()
		return fmt.Errorf("%s: %w", in, err)
	}
	if err := tmp.Chmod(0o644); err != nil {
		tmp.Close()
		return err
	}
	if err := tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), out)
}

type entry struct {
	ID          int    `xml:"ID,attr"`
	Name        string `xml:"Name,attr"`
	Description string `xml:"Description"` // weaknesses
	Summary     string `xml:"Summary"`     // categories
}

// text is the entry's description: a weakness has a Description, a
// category a Summary.
func (e entry) text() string { return e.Description + " " + e.Summary }

// convert reads the catalogue XML from r and writes the compressed table to
// w. The same XML always gives the same bytes (the gzip header carries no
// time or name).
func convert(w io.Writer, r io.Reader) error {
	version, entries, err := read(r)
	if err != nil {
		return err
	}
	zw, err := gzip.NewWriterLevel(w, gzip.BestCompression)
	if err != nil {
		return err
	}
	bw := bufio.NewWriter(zw)
	fmt.Fprintln(bw, version)
	for _, e := range entries {
		fmt.Fprintf(bw, "%d\t%s\t%s\n", e.ID, oneLine(e.Name), oneLine(e.text()))
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return zw.Close()
}

// read returns the catalogue version and its weaknesses and categories,
// sorted by id.
func read(r io.Reader) (string, []entry, error) {
	dec := xml.NewDecoder(r)
	var version string
	var entries []entry
	for {
		tok, err := dec.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return "", nil, err
		}
		start, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		switch start.Name.Local {
		case "Weakness_Catalog":
			for _, a := range start.Attr {
				if a.Name.Local == "Version" {
					version = a.Value
				}
			}
		case "Weakness", "Category":
			var e entry
			if err := dec.DecodeElement(&e, &start); err != nil {
				return "", nil, err
			}
			// An empty text means the schema changed (e.g. markup inside
			// the element, which would be dropped), not a missing text.
			if e.ID <= 0 || oneLine(e.Name) == "" || oneLine(e.text()) == "" {
				return "", nil, fmt.Errorf("%s without a positive ID, a name or a text (ID %d)", start.Name.Local, e.ID)
			}
			entries = append(entries, e)
		}
	}
	if version == "" || strings.ContainsAny(version, "\t\n") {
		return "", nil, fmt.Errorf("no usable Weakness_Catalog Version attribute (%q)", version)
	}
	if len(entries) == 0 {
		return "", nil, errors.New("no weaknesses or categories")
	}
	slices.SortFunc(entries, func(a, b entry) int { return a.ID - b.ID })
	for i := 1; i < len(entries); i++ {
		if entries[i].ID == entries[i-1].ID {
			return "", nil, fmt.Errorf("CWE-%d appears twice", entries[i].ID)
		}
	}
	return version, entries, nil
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }
