package jsonerr

import "testing"

func TestMemberPath(t *testing.T) {
	for in, want := range map[string]string{
		"runs.0.results":        "runs.results",
		"runs.results":          "runs.results",
		"results.12.packages.3": "results.packages",
		"types":                 "types",
		"a1.2b":                 "a1.2b",
		"":                      "",
	} {
		if got := MemberPath(in); got != want {
			t.Errorf("MemberPath(%q) = %q, want %q", in, got, want)
		}
	}
}
