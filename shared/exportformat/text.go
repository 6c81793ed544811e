package exportformat

import (
	"slices"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/exploitfeed"
)

// visibleSource gives src's rows with every text following the edge's
// text rule (cleantext.Visible: control and bidi control characters
// written out as `<U+XXXX>`). Ingestion already stores report text so;
// doing it here as well keeps every format clean whatever a row holds:
// issues stored before the rule, text from the exploit feeds, values no
// edge checked.
func visibleSource(src Source) Source {
	return func(yield func(Row) error) error {
		return src(func(r Row) error { return yield(visible(r)) })
	}
}

// visible is r with its texts cleaned; a title and a status reason may
// hold several lines, the rest one. Slices and the exploit values are
// shared with the source's row, so they are copied when they change, never
// written in place.
func visible(r Row) Row {
	line := cleantext.Visible
	r.ID, r.Project, r.Branch, r.Tool, r.Rule = line(r.ID), line(r.Project), line(r.Branch), line(r.Tool), line(r.Rule)
	r.Path, r.Urgency, r.Status, r.Fingerprint = line(r.Path), line(r.Urgency), line(r.Status), line(r.Fingerprint)
	r.Package, r.Ecosystem, r.Version, r.FixedVersion = line(r.Package), line(r.Ecosystem), line(r.Version), line(r.FixedVersion)
	r.Title, r.StatusReason = cleantext.VisibleLines(r.Title), cleantext.VisibleLines(r.StatusReason)
	r.Advisories = visibleAll(r.Advisories)
	r.Exploit = visibleExploit(r.Exploit)
	return r
}

// visibleAll cleans each of ids, in a copy when one changes.
func visibleAll(ids []string) []string {
	var out []string
	for i, id := range ids {
		if v := cleantext.Visible(id); v != id {
			if out == nil {
				out = slices.Clone(ids)
			}
			out[i] = v
		}
	}
	if out == nil {
		return ids
	}
	return out
}

// visibleExploit cleans the feeds' texts, in a copy when one changes.
func visibleExploit(x *Exploit) *Exploit {
	if x == nil {
		return nil
	}
	k, kChanged := visibleKEV(x.KEV)
	e, eChanged := visibleEPSS(x.EPSS)
	if !kChanged && !eChanged {
		return x
	}
	return &Exploit{KEV: k, EPSS: e}
}

func visibleKEV(k *exploitfeed.KEV) (*exploitfeed.KEV, bool) {
	if k == nil {
		return nil, false
	}
	if v := cleanKEV(*k); v != *k {
		return new(v), true
	}
	return k, false
}

func cleanKEV(k exploitfeed.KEV) exploitfeed.KEV {
	k.DateAdded, k.DueDate = cleantext.Visible(k.DateAdded), cleantext.Visible(k.DueDate)
	k.VendorProject, k.Product, k.Name = cleantext.Visible(k.VendorProject), cleantext.Visible(k.Product), cleantext.Visible(k.Name)
	return k
}

func visibleEPSS(e *exploitfeed.EPSS) (*exploitfeed.EPSS, bool) {
	if e == nil {
		return nil, false
	}
	d := cleantext.Visible(e.Date)
	if d == e.Date {
		return e, false
	}
	return &exploitfeed.EPSS{Score: e.Score, Percentile: e.Percentile, Date: d}, true
}
