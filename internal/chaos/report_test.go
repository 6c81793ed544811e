package chaos

import (
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strings"
)

// The pool of findings every report draws from: a fixed slot per
// finding, so that reports of a branch overlap (findings new, recurring
// and fixed from one scan to the next) and both projects and every branch
// hold the same findings (decisions spread across branches).
const poolSize = 48

// poolRule is slot k's rule: its id, CWE and SARIF level (the urgency).
func poolRule(k int) (rule string, cwe int, level string) {
	rules := []struct {
		id  string
		cwe int
	}{{"G201", 89}, {"G101", 798}, {"G304", 22}, {"G401", 327}, {"G107", 918}}
	r := rules[k%len(rules)]
	return r.id, r.cwe, []string{"error", "warning", "note"}[k%3]
}

// poolFile is slot k's file and line: eight files, lines far apart.
func poolFile(k int) (path string, line int) {
	return fmt.Sprintf("pkg/f%d.go", k%8), 10 + 7*(k/8)
}

// sourceLine is what the source file sent with a run holds at slot k's
// line: the flagged code, which identifies the finding when it is sent.
func sourceLine(k int) string { return fmt.Sprintf("\tcall%d(input) // slot %d", k, k) }

// sarifReport is the SARIF report of the slots.
func sarifReport(slots []int) []byte {
	type loc = map[string]any
	var results []map[string]any
	for _, k := range slots {
		rule, cwe, level := poolRule(k)
		path, line := poolFile(k)
		results = append(results, map[string]any{
			"ruleId": rule, "level": level,
			"message":    map[string]any{"text": fmt.Sprintf("finding %d of rule %s", k, rule)},
			"properties": map[string]any{"tags": []string{fmt.Sprintf("CWE-%d", cwe)}},
			"locations":  []loc{{"physicalLocation": loc{"artifactLocation": loc{"uri": path}, "region": loc{"startLine": line}}}},
		})
	}
	b, err := json.Marshal(map[string]any{"version": "2.1.0", "runs": []any{map[string]any{
		"tool": map[string]any{"driver": map[string]any{"name": "gosec"}}, "results": results}}})
	if err != nil {
		panic(err)
	}
	return b
}

// sources are the source files of the slots' findings, by path: each line
// a slot flags holds its code, the others filler.
func sources(slots []int) map[string]string {
	lines := map[string]map[int]string{}
	for _, k := range slots {
		path, line := poolFile(k)
		if lines[path] == nil {
			lines[path] = map[int]string{}
		}
		lines[path][line] = sourceLine(k)
	}
	out := map[string]string{}
	for path, ls := range lines {
		var b strings.Builder
		b.WriteString("package pkg\n")
		last := slices.Max(slices.Collect(maps.Keys(ls)))
		for n := 2; n <= last+2; n++ {
			if s, ok := ls[n]; ok {
				b.WriteString(s + "\n")
			} else {
				fmt.Fprintf(&b, "\t_ = %d\n", n)
			}
		}
		out[path] = b.String()
	}
	return out
}
