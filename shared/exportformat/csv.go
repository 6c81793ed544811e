package exportformat

import (
	"encoding/csv"
	"io"
	"strconv"
	"strings"
	"unicode/utf8"
)

// csvHeader names the CSV columns. kev is true or false once the finding
// was enriched, empty before; the epss columns are empty without a score.
var csvHeader = []string{"id", "project", "branch", "tool", "rule", "title", "cwe", "path", "line", "urgency",
	"status", "status_reason", "first_seen", "last_seen", "package", "ecosystem", "version", "fixed_version",
	"advisories", "reachable", "kev", "kev_date_added", "kev_due_date", "kev_ransomware", "epss",
	"epss_percentile", "epss_date"}

func writeCSV(w io.Writer, src Source) (int, error) {
	cw := csv.NewWriter(w)
	if err := cw.Write(csvHeader); err != nil {
		return 0, err
	}
	rec := make([]string, len(csvHeader))
	n := 0
	err := src(func(r Row) error {
		csvRecord(rec, r)
		for i, v := range rec {
			rec[i] = cell(v)
		}
		if err := cw.Write(rec); err != nil {
			return err
		}
		n++
		return nil
	})
	if err != nil {
		return n, err
	}
	cw.Flush()
	return n, cw.Error()
}

// csvRecord fills rec (len(csvHeader)) with r's values.
func csvRecord(rec []string, r Row) {
	clear(rec)
	rec[0], rec[1], rec[2], rec[3], rec[4], rec[5] = r.ID, r.Project, r.Branch, r.Tool, r.Rule, r.Title
	rec[6], rec[7] = cweID(r), r.Path
	if r.Line > 0 {
		rec[8] = strconv.Itoa(r.Line)
	}
	rec[9], rec[10], rec[11] = r.Urgency, r.Status, r.StatusReason
	rec[12], rec[13] = stamp(r.FirstSeen), stamp(r.LastSeen)
	rec[14], rec[15], rec[16], rec[17] = r.Package, r.Ecosystem, r.Version, r.FixedVersion
	rec[18] = strings.Join(r.Advisories, " ")
	if r.Reachable != nil {
		rec[19] = strconv.FormatBool(*r.Reachable)
	}
	if x := r.Exploit; x != nil {
		rec[20] = strconv.FormatBool(x.KEV != nil)
		if k := x.KEV; k != nil {
			rec[21], rec[22], rec[23] = k.DateAdded, k.DueDate, strconv.FormatBool(k.KnownRansomwareUse)
		}
		if e := x.EPSS; e != nil {
			rec[24] = strconv.FormatFloat(e.Score, 'f', -1, 64)
			rec[25] = strconv.FormatFloat(e.Percentile, 'f', -1, 64)
			rec[26] = e.Date
		}
	}
}

// formulaStarts are the first characters after which a spreadsheet may
// read a cell as a formula (see the package doc): the four operators, their
// full-width forms, the white space it skips, and a double quote.
const formulaStarts = "=+-@\uFF1D\uFF0B\uFF0D\uFF20\t\r\n \""

// cell guards a value against formula injection: a leading quote makes
// the cell text.
func cell(v string) string {
	if r, _ := utf8.DecodeRuneInString(v); v != "" && strings.ContainsRune(formulaStarts, r) {
		return "'" + v
	}
	return v
}
