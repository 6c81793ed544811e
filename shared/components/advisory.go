package components

import (
	"slices"
	"strings"
)

// Advisory is what an upload says of one vulnerability in one package:
// its ids and which versions it affects, as OSV records say it (ranges of
// introduced, fixed and last_affected events, and versions listed one by
// one). The inventory finds the company's holders of an affected version
// with it (the blast radius).
type Advisory struct {
	ID      string
	Aliases []string
	// Package is the package URL without version; Ecosystem its OSV
	// ecosystem.
	Package, Ecosystem string
	Ranges             [][]Event
	Versions           []string
}

// Event is one event of an OSV range; exactly one field is set.
type Event struct {
	Introduced, Fixed, LastAffected string
}

// Affects reports whether version v lies in the advisory: one of its
// listed versions, or inside one of its ranges by OSV's evaluation (the
// events in version order; introduced opens the range, fixed closes it at
// that version, last_affected after it; "0" introduces from the start).
func (a Advisory) Affects(v Version) bool {
	for _, lv := range a.Versions {
		if w, err := ParseVersion(a.Ecosystem, lv); err == nil && v.Compare(w) == 0 {
			return true
		}
	}
	for _, r := range a.Ranges {
		if inRange(a.Ecosystem, r, v) {
			return true
		}
	}
	return false
}

type boundEvent struct {
	kind string
	at   Version
	zero bool
}

func inRange(ecosystem string, events []Event, v Version) bool {
	var bs []boundEvent
	for _, e := range events {
		kind, raw := "introduced", e.Introduced
		switch {
		case e.Fixed != "":
			kind, raw = "fixed", e.Fixed
		case e.LastAffected != "":
			kind, raw = "last_affected", e.LastAffected
		}
		if kind == "introduced" && raw == "0" {
			bs = append(bs, boundEvent{kind: kind, zero: true})
			continue
		}
		at, err := ParseVersion(ecosystem, raw)
		if err != nil {
			continue
		}
		bs = append(bs, boundEvent{kind: kind, at: at})
	}
	slices.SortStableFunc(bs, func(x, y boundEvent) int {
		switch {
		case x.zero && y.zero:
			return 0
		case x.zero:
			return -1
		case y.zero:
			return 1
		}
		return x.at.Compare(y.at)
	})
	affected := false
	for _, b := range bs {
		switch b.kind {
		case "introduced":
			if b.zero || v.Compare(b.at) >= 0 {
				affected = true
			}
		case "fixed":
			if v.Compare(b.at) >= 0 {
				affected = false
			}
		case "last_affected":
			if v.Compare(b.at) > 0 {
				affected = false
			}
		}
	}
	return affected
}

// Inventory is what an upload lists: its components and the advisories
// it brings.
type Inventory struct {
	Components []Component
	Advisories []Advisory
}

// Key names an advisory of a package for its event: the id and the
// package.
func (a Advisory) Key() string { return a.ID + " " + a.Package }

// MergeAdvisories keeps one advisory per id and package, the ranges and
// versions of the duplicates joined.
func MergeAdvisories(as []Advisory) []Advisory {
	var out []Advisory
	at := map[string]int{}
	for _, a := range as {
		if strings.TrimSpace(a.ID) == "" || a.Package == "" {
			continue
		}
		if i, ok := at[a.Key()]; ok {
			out[i].Ranges = append(out[i].Ranges, a.Ranges...)
			out[i].Versions = append(out[i].Versions, a.Versions...)
			continue
		}
		at[a.Key()] = len(out)
		out = append(out, a)
	}
	return out
}

// FromFinding is the advisory an SCA finding stands for when no OSV record
// of it is at hand (the KEV trigger of the blast radius: the catalogue
// names a CVE, the company's findings name its package): advisory id and
// aliases, the finding's package (an OSV ecosystem, name and version, as
// FromEcosystem reads them) and its fix version. The affected versions are
// an approximation: with a fix version the finding's version is below,
// every version below the fix (a range introduced at "0": the finding does
// not say where the vulnerability was introduced, so older versions that
// never had it count too); without one, or with one that does not read or
// is not above the finding's version, the finding's version only.
func FromFinding(id string, aliases []string, ecosystem, name, version, fixVersion string) (Advisory, error) {
	c, err := FromEcosystem(ecosystem, name, version, "")
	if err != nil {
		return Advisory{}, err
	}
	a := Advisory{ID: id, Aliases: aliases, Package: c.Package, Ecosystem: c.Ecosystem, Versions: []string{c.Version}}
	fix := strings.TrimSpace(fixVersion)
	if fix == "" {
		return a, nil
	}
	fv, err := ParseVersion(c.Ecosystem, fix)
	if err != nil {
		return a, nil
	}
	if v, err := ParseVersion(c.Ecosystem, c.Version); err == nil && v.Compare(fv) < 0 {
		a.Ranges = [][]Event{{{Introduced: "0"}, {Fixed: fix}}}
	}
	return a, nil
}
