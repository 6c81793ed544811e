package vex

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// OpenVEX v0.2.0 (github.com/openvex/spec), the members read.
type openVEXDoc struct {
	Context    string             `json:"@context"`
	ID         string             `json:"@id"`
	Timestamp  string             `json:"timestamp"`
	Statements []openVEXStatement `json:"statements"`
}

type openVEXStatement struct {
	Vulnerability struct {
		ID      string   `json:"@id"`
		Name    string   `json:"name"`
		Aliases []string `json:"aliases"`
	} `json:"vulnerability"`
	Timestamp       string             `json:"timestamp"`
	LastUpdated     string             `json:"last_updated"`
	Products        []openVEXComponent `json:"products"`
	Status          string             `json:"status"`
	StatusNotes     string             `json:"status_notes"`
	Justification   string             `json:"justification"`
	ImpactStatement string             `json:"impact_statement"`
	ActionStatement string             `json:"action_statement"`
}

type openVEXComponent struct {
	ID            string             `json:"@id"`
	Identifiers   map[string]string  `json:"identifiers"`
	Subcomponents []openVEXComponent `json:"subcomponents"`
}

// parseOpenVEX checks an OpenVEX document against the v0.2.0 schema and
// reads its statements. A statement is about its products' subcomponents
// when a product lists any (the packages inside the product that carry
// the vulnerability), else about the products themselves.
func parseOpenVEX(data []byte, top map[string]json.RawMessage) (Document, error) {
	if err := countStatements(top, "statements"); err != nil {
		return Document{}, err
	}
	if err := validate(FormatOpenVEX, data); err != nil {
		return Document{}, err
	}
	var d openVEXDoc
	if err := decode(data, &d); err != nil {
		return Document{}, errorf("", "the document is not valid OpenVEX JSON")
	}
	doc := Document{ID: d.ID, SpecVersion: contextVersion(d.Context)}
	docAt := parseTime(d.Timestamp)
	for n, s := range d.Statements {
		st, err := openVEXStatementOf(n, s, docAt)
		if err != nil {
			return Document{}, err
		}
		doc.Statements = append(doc.Statements, st)
	}
	return doc, nil
}

// contextVersion is the version segment of an OpenVEX context
// (https://openvex.dev/ns/v0.2.0), "" when it has none.
func contextVersion(ctx string) string {
	_, v, ok := strings.Cut(strings.TrimPrefix(ctx, "https://openvex.dev/ns"), "/")
	if !ok {
		return ""
	}
	return v
}

// openVEXStatementOf reads statement n of a document stamped docAt.
func openVEXStatementOf(n int, s openVEXStatement, docAt time.Time) (Statement, error) {
	ptr := fmt.Sprintf("/statements/%d", n)
	v := s.Vulnerability
	st := Statement{
		Pointer: ptr, Vulnerability: visible(firstOf(v.Name, v.ID)), Status: s.Status,
		Justification: visible(s.Justification), Detail: visibleLines(firstOf(s.ImpactStatement, s.StatusNotes)),
		Action: visibleLines(s.ActionStatement), order: n,
	}
	st.IDs = canonicalIDs(append([]string{v.Name, v.ID}, v.Aliases...))
	if len(st.IDs) == 0 {
		return Statement{}, errorf(ptr+"/vulnerability", "names no advisory id")
	}
	st.At = firstTime(parseTime(s.LastUpdated), parseTime(s.Timestamp), docAt)
	for p, prod := range s.Products {
		pptr := fmt.Sprintf("%s/products/%d", ptr, p)
		if len(prod.Subcomponents) == 0 {
			if err := st.addComponent(pptr, prod); err != nil {
				return Statement{}, err
			}
			continue
		}
		for c, sub := range prod.Subcomponents {
			if err := st.addComponent(fmt.Sprintf("%s/subcomponents/%d", pptr, c), sub); err != nil {
				return Statement{}, err
			}
		}
	}
	return st, nil
}

// addComponent adds the package an OpenVEX component names (at pointer
// ptr): its identifiers' purl, else its @id when that is a purl; any
// other component is unresolved.
func (st *Statement) addComponent(ptr string, c openVEXComponent) error {
	ref, field := c.ID, ptr+"/@id"
	if p, ok := c.Identifiers["purl"]; ok {
		ref, field = p, ptr+"/identifiers/purl"
	}
	if !IsPURL(ref) {
		st.Unresolved = append(st.Unresolved, Unresolved{Ref: visible(clip(firstOf(ref, c.ID), MaxIDBytes)), Reason: "not a package URL"})
		return nil
	}
	pkg, err := ParsePURL(field, ref)
	if err != nil {
		return err
	}
	st.Packages = append(st.Packages, pkg)
	return nil
}
