package reportfinding

import (
	"reflect"
	"slices"
	"strings"
	"testing"
)

// notText are the string fields whose values the parsers choose from a
// fixed set: MapText leaves them alone.
var notText = []string{"Finding.Kind", "Finding.Urgency", "Suppression.Kind", "Dependency.Severity", "Reachability.Status"}

// MapText reaches every string of a report but the fixed values, each
// once, with its kind: a text field added without being listed there
// fails this test.
func TestMapTextReachesEveryText(t *testing.T) {
	rep := Report{Tools: []string{""}, Findings: []Finding{{Suppression: &Suppression{}, SCA: &Dependency{IDs: []string{""},
		Reachability: Reachability{Usages: []Usage{{}}}}, Fix: &Fix{Replacements: []Replacement{{}}}}}}
	want := fill(t, reflect.ValueOf(&rep).Elem(), "Report")
	got := map[string]TextKind{}
	rep.MapText(func(s string, k TextKind) string {
		if _, dup := got[s]; dup {
			t.Errorf("%s visited twice", s)
		}
		got[s] = k
		return s + "!"
	})
	for _, name := range want {
		if _, ok := got[name]; !ok {
			t.Errorf("MapText does not reach %s", name)
		}
	}
	if len(got) != len(want) {
		t.Errorf("MapText visits %d texts, the report has %d: %v", len(got), len(want), got)
	}
	kinds := map[string]TextKind{"Finding.Path": TextPath, "Dependency.Manifest": TextPath, "Usage.File": TextPath,
		"Finding.Message": TextProse, "Suppression.Justification": TextProse, "Finding.RuleID": TextName, "Report.Tools[0]": TextName,
		"Replacement.Path": TextPath, "Replacement.Inserted": TextProse, "Fix.Diff": TextProse, "Fix.FullCode": TextProse}
	for name, k := range kinds {
		if got[name] != k {
			t.Errorf("%s has kind %d, want %d", name, got[name], k)
		}
	}
	// What fn returns is stored.
	if f := rep.Findings[0]; f.Message != "Finding.Message!" || f.SCA.IDs[0] != "Dependency.IDs[0]!" || rep.Branch != "Report.Branch!" ||
		f.Fix.Replacements[0].Inserted != "Replacement.Inserted!" {
		t.Errorf("not stored back: %+v", f)
	}
}

// fill sets every string of v (through structs, pointers and slices) to
// its own name and returns the names of those MapText must reach.
func fill(t *testing.T, v reflect.Value, name string) []string {
	switch v.Kind() {
	case reflect.String:
		v.SetString(name)
		return []string{name}
	case reflect.Pointer:
		if v.IsNil() {
			return nil
		}
		return fill(t, v.Elem(), name)
	case reflect.Slice:
		var out []string
		for i := range v.Len() {
			out = append(out, fill(t, v.Index(i), name+"["+string(rune('0'+i))+"]")...)
		}
		return out
	case reflect.Struct:
		var out []string
		for i := range v.NumField() {
			field := v.Type().Name() + "." + v.Type().Field(i).Name
			names := fill(t, v.Field(i), field)
			if slices.Contains(notText, field) {
				continue
			}
			out = append(out, names...)
		}
		return out
	case reflect.Map, reflect.Int, reflect.Float64, reflect.Bool:
		return nil
	}
	t.Fatalf("%s: a field of kind %s: tell MapText and this test about it", name, v.Kind())
	return nil
}

// A parser keeps a fix's replacements only within the bounds and when the
// text rule leaves their code as it is; the explanation stays either way.
func TestKeepFix(t *testing.T) {
	one := []Replacement{{Path: "a.go", Region: Region{StartLine: 1}, Inserted: "x := 1\n\tgo f()"}}
	if got := KeepFix("why", one); got == nil || len(got.Replacements) != 1 || got.Explanation != "why" {
		t.Fatalf("a plain fix: %+v", got)
	}
	if got := KeepFix("", nil); got != nil {
		t.Fatalf("nothing to keep: %+v", got)
	}
	many := make([]Replacement, MaxFixReplacements+1)
	big := []Replacement{{Inserted: strings.Repeat("x", MaxFixText/2)}, {Deleted: strings.Repeat("y", MaxFixText/2+1)}}
	for name, reps := range map[string][]Replacement{
		"too many":          many,
		"too much text":     big,
		"a control char":    {{Inserted: "print(\"\x1b[31m\")"}},
		"a carriage return": {{Inserted: "a\r\nb"}},
		"a bidi override":   {{Lines: "s := \"\u202e\""}},
		"not NFC":           {{Deleted: "cafe\u0301"}},
	} {
		got := KeepFix("why", reps)
		if got == nil || got.Explanation != "why" || got.Replacements != nil {
			t.Errorf("%s: %+v", name, got)
		}
		if got := KeepFix("", reps); got != nil {
			t.Errorf("%s without explanation: %+v", name, got)
		}
	}
}
