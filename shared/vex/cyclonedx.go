package vex

import (
	"encoding/json"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
)

// CycloneDX 1.4 to 1.6 (github.com/CycloneDX/specification), the members
// a VEX reads.
type cdxDoc struct {
	SpecVersion  string      `json:"specVersion"`
	SerialNumber string      `json:"serialNumber"`
	Version      json.Number `json:"version"`
	Metadata     struct {
		Timestamp string        `json:"timestamp"`
		Component *cdxComponent `json:"component"`
	} `json:"metadata"`
	Components      []cdxComponent `json:"components"`
	Vulnerabilities []cdxVuln      `json:"vulnerabilities"`
}

type cdxComponent struct {
	BOMRef     string         `json:"bom-ref"`
	PURL       string         `json:"purl"`
	Components []cdxComponent `json:"components"`
}

type cdxVuln struct {
	ID         string `json:"id"`
	References []struct {
		ID string `json:"id"`
	} `json:"references"`
	Updated  string `json:"updated"`
	Analysis struct {
		State         string   `json:"state"`
		Justification string   `json:"justification"`
		Response      []string `json:"response"`
		Detail        string   `json:"detail"`
		LastUpdated   string   `json:"lastUpdated"`
	} `json:"analysis"`
	Affects []struct {
		Ref      string `json:"ref"`
		Versions []struct {
			Version string `json:"version"`
			Range   string `json:"range"`
		} `json:"versions"`
	} `json:"affects"`
}

// cdxStatus maps CycloneDX's impact analysis states onto the statuses.
var cdxStatus = map[string]string{
	"not_affected": NotAffected, "false_positive": NotAffected,
	"exploitable": Affected, "in_triage": UnderInvestigation,
	"resolved": Fixed, "resolved_with_pedigree": Fixed,
}

// componentRef is a component's purl and where it is written.
type componentRef struct{ purl, pointer string }

// parseCycloneDX checks a CycloneDX document against the schema of its
// specVersion and reads each vulnerability with an analysis as a
// statement about the packages its affects[].ref name.
func parseCycloneDX(data []byte, top map[string]json.RawMessage) (Document, error) {
	var spec string
	if json.Unmarshal(top["specVersion"], &spec) != nil || !slices.Contains(cycloneDXVersions, spec) {
		return Document{}, errorf("/specVersion", "must be one of %s (CycloneDX JSON)", strings.Join(cycloneDXVersions, ", "))
	}
	if err := countStatements(top, "vulnerabilities"); err != nil {
		return Document{}, err
	}
	if err := validate(FormatCycloneDX+"-"+spec, data); err != nil {
		return Document{}, err
	}
	var d cdxDoc
	if err := decode(data, &d); err != nil {
		return Document{}, errorf("", "the document is not valid CycloneDX JSON")
	}
	doc := Document{SpecVersion: spec, ID: d.SerialNumber}
	if doc.ID != "" && d.Version != "" {
		doc.ID += "/" + d.Version.String()
	}
	refs := map[string]componentRef{}
	if c := d.Metadata.Component; c != nil {
		indexComponents(refs, "/metadata/component", []cdxComponent{*c}, false)
	}
	indexComponents(refs, "/components", d.Components, true)
	docAt := parseTime(d.Metadata.Timestamp)
	for n, v := range d.Vulnerabilities {
		st, err := cdxStatement(n, v, refs, docAt)
		if err != nil {
			return Document{}, err
		}
		doc.Statements = append(doc.Statements, st)
	}
	return doc, nil
}

// indexComponents records the purl of every component (nested ones
// too) by its bom-ref.
func indexComponents(refs map[string]componentRef, ptr string, cs []cdxComponent, list bool) {
	for n, c := range cs {
		p := ptr
		if list {
			p = fmt.Sprintf("%s/%d", ptr, n)
		}
		if c.BOMRef != "" {
			refs[c.BOMRef] = componentRef{purl: c.PURL, pointer: p + "/purl"}
		}
		indexComponents(refs, p+"/components", c.Components, true)
	}
}

// cdxStatement reads vulnerability n.
func cdxStatement(n int, v cdxVuln, refs map[string]componentRef, docAt time.Time) (Statement, error) {
	ptr := fmt.Sprintf("/vulnerabilities/%d", n)
	a := v.Analysis
	st := Statement{
		Pointer: ptr, Vulnerability: visible(v.ID), Status: cdxStatus[a.State],
		Justification: visible(a.Justification), Detail: visibleLines(a.Detail),
		Action: visible(strings.Join(a.Response, ", ")), order: n,
		At: firstTime(parseTime(a.LastUpdated), parseTime(v.Updated), docAt),
	}
	ids := []string{v.ID}
	for _, r := range v.References {
		ids = append(ids, r.ID)
	}
	if st.IDs = canonicalIDs(ids); len(st.IDs) == 0 {
		return Statement{}, errorf(ptr+"/id", "names no advisory id")
	}
	for m, af := range v.Affects {
		if err := st.addAffects(fmt.Sprintf("%s/affects/%d", ptr, m), af.Ref, versionsOf(af.Versions), refs); err != nil {
			return Statement{}, err
		}
	}
	return st, nil
}

// versionsOf are the exact versions an affects entry lists, and whether
// it lists a range (vers:), which is not evaluated.
func versionsOf(vs []struct {
	Version string `json:"version"`
	Range   string `json:"range"`
}) (out versionList) {
	for _, v := range vs {
		switch {
		case v.Version != "":
			out.exact = append(out.exact, v.Version)
		case v.Range != "":
			out.ranges = true
		}
	}
	return out
}

type versionList struct {
	exact  []string
	ranges bool
}

// addAffects adds the packages an affects entry (at ptr) names: the
// component its ref names (a bom-ref of the document, or the fragment of a
// BOM-Link, urn:cdx:serial/version#bom-ref), by its purl, or the ref
// itself when it is a purl; restricted to the exact versions listed.
func (st *Statement) addAffects(ptr, ref string, vs versionList, refs map[string]componentRef) error {
	purl, field, why := resolveRef(ptr+"/ref", ref, refs)
	if why != "" {
		st.Unresolved = append(st.Unresolved, Unresolved{Ref: visible(clip(ref, MaxIDBytes)), Reason: why})
		return nil
	}
	pkg, err := ParsePURL(field, purl)
	if err != nil {
		return err
	}
	switch {
	case len(vs.exact) > 0:
		for _, v := range vs.exact {
			p := pkg
			p.Version = v
			st.Packages = append(st.Packages, p)
		}
	case vs.ranges:
		st.Unresolved = append(st.Unresolved, Unresolved{Ref: visible(clip(ref, MaxIDBytes)), Reason: "version ranges (vers:) are not evaluated"})
	default:
		st.Packages = append(st.Packages, pkg)
	}
	return nil
}

// resolveRef finds the purl an affects ref names and the field it is
// written in; why says why there is none.
func resolveRef(field, ref string, refs map[string]componentRef) (purl, at, why string) {
	name := ref
	if strings.HasPrefix(ref, "urn:cdx:") {
		_, frag, ok := strings.Cut(ref, "#")
		if !ok {
			return "", "", "a BOM-Link to a whole BOM names no component"
		}
		if u, err := url.PathUnescape(frag); err == nil {
			frag = u
		}
		name = frag
	}
	if c, ok := refs[name]; ok {
		if c.purl == "" {
			return "", "", "the component has no purl"
		}
		return c.purl, c.pointer, ""
	}
	if IsPURL(name) {
		return name, field, ""
	}
	return "", "", "names no component of the document with a purl"
}

// countStatements refuses a document past MaxStatements entries of its
// statement array member, before it is checked further.
func countStatements(top map[string]json.RawMessage, member string) error {
	raw, ok := top[member]
	if !ok {
		return nil
	}
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return nil // the schema names what is wrong
	}
	if len(items) > MaxStatements {
		return &Error{Field: "/" + member, Problem: fmt.Sprintf("may hold at most %d entries", MaxStatements), TooLarge: true}
	}
	return nil
}
