package sarif_test

import (
	"testing"

	"github.com/acme/codescan-api/shared/reports/sarif"
)

// The category is runAutomationDetails.id up to its last "/", as GitHub
// code scanning reads it; an id without "/" names none; the first run
// naming one gives the report's.
func TestCategory(t *testing.T) {
	for id, want := range map[string]string{
		`"my-analysis/tool1/2022-01-02"`: "my-analysis/tool1",
		`"my-analysis/tool1/"`:           "my-analysis/tool1",
		`"my-analysis for tool1"`:        "",
		`"/language:javascript/"`:        "/language:javascript",
		`""`:                             "",
	} {
		log := `{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[]},` +
			`{"tool":{"driver":{"name":"t"}},"automationDetails":{"id":` + id + `},"results":[]}]}`
		rep, err := sarif.Parse([]byte(log))
		if err != nil {
			t.Fatal(err)
		}
		if rep.Category != want {
			t.Errorf("id %s: category %q, want %q", id, rep.Category, want)
		}
	}
	rep, err := sarif.Parse([]byte(`{"version":"2.1.0","runs":[{"tool":{"driver":{"name":"t"}},"results":[]}]}`))
	if err != nil || rep.Category != "" {
		t.Fatalf("no automation details: %q %v", rep.Category, err)
	}
}
