package exportformat

import (
	"bufio"
	"cmp"
	"encoding/json"
	"fmt"

	"github.com/acme/codescan-api/shared/sariflog"
)

// The SARIF objects are sariflog's (written by hand: go-sarif's types
// marshal some 300 bytes more per result, and the log is streamed
// piecewise anyway).
type (
	sarifResult struct {
		RuleID              string              `json:"ruleId"`
		RuleIndex           int                 `json:"ruleIndex"`
		Level               string              `json:"level"`
		Message             sariflog.Message    `json:"message"`
		Locations           []sariflog.Location `json:"locations,omitempty"`
		PartialFingerprints map[string]string   `json:"partialFingerprints,omitempty"`
		Properties          sarifProperties     `json:"properties"`
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
		ID               string            `json:"id"`
		ShortDescription *sariflog.Message `json:"shortDescription,omitempty"`
		Properties       map[string]any    `json:"properties,omitempty"`
	}
)

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
		rule.ShortDescription = &sariflog.Message{Text: r.Title}
	}
	if r.CWE > 0 {
		rule.Properties = map[string]any{"tags": sariflog.CWETags(r.CWE)}
	}
	return rule
}

func sarifResultOf(r Row, rule string, idx int) sarifResult {
	res := sarifResult{RuleID: rule, RuleIndex: idx, Level: sariflog.Level(r.Urgency), Message: sariflog.Message{Text: title(r)},
		Properties: sarifProperties{IssueID: r.ID, Urgency: r.Urgency, Status: r.Status,
			SecuritySeverity: sariflog.SecuritySeverity(r.Urgency), CWE: cweID(r), StatusReason: r.StatusReason,
			Package: packageOf(r), Advisories: r.Advisories, Exploit: exploitOf(r)}}
	if r.Path != "" {
		res.Locations = []sariflog.Location{sariflog.At(uriRef(r.Path), r.Line)}
	}
	if r.Fingerprint != "" {
		res.PartialFingerprints = map[string]string{sariflog.FingerprintKey: r.Fingerprint}
	}
	return res
}
