package exportformat

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"
	"strconv"
)

// The SARIF objects are written by hand rather than with go-sarif's types:
// those marshal every array and index they declare (empty arrays, -1
// sentinels, a default kind), some 300 bytes more per result, and the log
// must be streamed piecewise anyway.
type (
	sarifMessage struct {
		Text string `json:"text"`
	}
	sarifRegion struct {
		StartLine int `json:"startLine"`
	}
	sarifArtifact struct {
		URI string `json:"uri"`
	}
	sarifPhysical struct {
		ArtifactLocation sarifArtifact `json:"artifactLocation"`
		Region           *sarifRegion  `json:"region,omitempty"`
	}
	sarifLocation struct {
		PhysicalLocation sarifPhysical `json:"physicalLocation"`
	}
	sarifResult struct {
		RuleID              string            `json:"ruleId"`
		RuleIndex           int               `json:"ruleIndex"`
		Level               string            `json:"level"`
		Message             sarifMessage      `json:"message"`
		Locations           []sarifLocation   `json:"locations,omitempty"`
		PartialFingerprints map[string]string `json:"partialFingerprints,omitempty"`
		Properties          sarifProperties   `json:"properties"`
	}
	// sarifProperties is a result's property bag; exploit is left out
	// before the finding was enriched.
	sarifProperties struct {
		IssueID          string       `json:"issue_id"`
		Urgency          string       `json:"urgency"`
		Status           string       `json:"status"`
		SecuritySeverity string       `json:"security-severity"`
		CWE              string       `json:"cwe,omitempty"`
		StatusReason     string       `json:"status_reason,omitempty"`
		Package          *jsonPackage `json:"package,omitempty"`
		Advisories       []string     `json:"advisories,omitempty"`
		Exploit          *jsonExploit `json:"exploit,omitempty"`
	}
	sarifRule struct {
		ID               string         `json:"id"`
		ShortDescription *sarifMessage  `json:"shortDescription,omitempty"`
		Properties       map[string]any `json:"properties,omitempty"`
	}
)

// FingerprintKey names the issue fingerprint in a result's
// partialFingerprints (the key the scan reports use, so an exported log
// uploaded again keeps the issues' identity).
const FingerprintKey = "codescanFingerprint/v1"

// defaultTool names the run of findings without a tool.
const defaultTool = "codescan"

// writeSARIF writes one run per tool: the first pass writes the first
// tool's results and notes the other tools; one more pass per other tool.
// Within a run the results come first and the rules after them (member
// order is free in JSON), so the rules can be gathered while streaming.
func writeSARIF(w *bufio.Writer, src Source) (int, error) {
	w.WriteString(`{"$schema":"https://json.schemastore.org/sarif-2.1.0.json","version":"2.1.0","runs":[`)
	var tools []string
	seen := map[string]bool{}
	total := 0
	for pass := 0; pass == 0 || pass < len(tools); pass++ {
		current := ""
		if pass > 0 {
			current = tools[pass]
			w.WriteString(`,{"results":[`)
		}
		var rules []sarifRule
		ruleIndex := map[string]int{}
		enc := json.NewEncoder(w)
		enc.SetEscapeHTML(false)
		n := 0
		err := src(func(r Row) error {
			tool := cmp.Or(r.Tool, defaultTool)
			if !seen[tool] {
				seen[tool] = true
				tools = append(tools, tool)
			}
			if current == "" { // the first row of the first pass
				current = tool
				w.WriteString(`{"results":[`)
			}
			if tool != current {
				return nil
			}
			id := cmp.Or(r.Rule, "finding")
			idx, ok := ruleIndex[id]
			if !ok {
				idx = len(rules)
				ruleIndex[id] = idx
				rules = append(rules, sarifRuleOf(r, id))
			}
			if n > 0 {
				w.WriteByte(',')
			}
			if err := enc.Encode(sarifResultOf(r, id, idx)); err != nil {
				return err
			}
			n++
			return nil
		})
		if err != nil {
			return total + n, err
		}
		total += n
		if current == "" { // no rows at all: one empty run
			current = defaultTool
			w.WriteString(`{"results":[`)
		}
		driver, err := json.Marshal(map[string]any{"name": current, "rules": nonNil(rules)})
		if err != nil {
			return total, err
		}
		fmt.Fprintf(w, `],"tool":{"driver":%s}}`, driver)
	}
	w.WriteString("]}\n")
	return total, nil
}

func nonNil[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
}

// sarifRuleOf describes a rule by the first finding of it: its title and
// CWE tag.
func sarifRuleOf(r Row, id string) sarifRule {
	rule := sarifRule{ID: id}
	if r.Title != "" {
		rule.ShortDescription = &sarifMessage{Text: r.Title}
	}
	if r.CWE > 0 {
		rule.Properties = map[string]any{"tags": []string{"security", "external/cwe/cwe-" + strconv.Itoa(r.CWE)}}
	}
	return rule
}

func sarifResultOf(r Row, rule string, idx int) sarifResult {
	res := sarifResult{RuleID: rule, RuleIndex: idx, Level: level(r.Urgency), Message: sarifMessage{Text: title(r)},
		Properties: sarifProperties{IssueID: r.ID, Urgency: r.Urgency, Status: r.Status,
			SecuritySeverity: severity(r.Urgency), CWE: cweID(r), StatusReason: r.StatusReason,
			Package: packageOf(r), Advisories: r.Advisories, Exploit: exploitOf(r)}}
	if r.Path != "" {
		loc := sarifLocation{PhysicalLocation: sarifPhysical{ArtifactLocation: sarifArtifact{URI: uriRef(r.Path)}}}
		if r.Line > 0 {
			loc.PhysicalLocation.Region = &sarifRegion{StartLine: r.Line}
		}
		res.Locations = []sarifLocation{loc}
	}
	if r.Fingerprint != "" {
		res.PartialFingerprints = map[string]string{FingerprintKey: r.Fingerprint}
	}
	return res
}

// level is the SARIF level of an urgency.
func level(u string) string {
	switch u {
	case "CR", "HI":
		return "error"
	case "ME":
		return "warning"
	}
	return "note"
}

// severity is a security-severity score inside the urgency's band (as
// GitHub code scanning reads it).
func severity(u string) string {
	switch u {
	case "CR":
		return "9.5"
	case "HI":
		return "8.0"
	case "ME":
		return "5.5"
	}
	return "2.0"
}
