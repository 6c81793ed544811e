package reports

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/reportfinding"
)

func fixture(t testing.TB, parts ...string) []byte {
	t.Helper()
	data, err := os.ReadFile(filepath.Join(parts...))
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// Every engine reads its own fixture, whatever the case of its name; the
// aliases read SARIF; SARIF of govulncheck becomes SCA findings.
func TestDispatch(t *testing.T) {
	cases := []struct {
		engine string
		file   []string
		kind   reportfinding.Kind
	}{
		{"sarif", []string{"sarif", "testdata", "gosec-real.sarif"}, reportfinding.SAST},
		{"SARIF", []string{"sarif", "testdata", "staticcheck.sarif"}, reportfinding.Quality},
		{"codeql", []string{"sarif", "testdata", "codeql.sarif"}, reportfinding.SAST},
		{"Snyk", []string{"sarif", "testdata", "gosec-real.sarif"}, reportfinding.SAST},
		{"sarif", []string{"govulncheck", "testdata", "calls.sarif"}, reportfinding.SCA},
		{"semgrep", []string{"semgrep", "testdata", "deduplication.json"}, reportfinding.SAST},
		{"semgrep", []string{"sarif", "testdata", "semgrep.sarif"}, reportfinding.SAST},
		{"govulncheck", []string{"govulncheck", "testdata", "calls.json"}, reportfinding.SCA},
		{"govulncheck", []string{"govulncheck", "testdata", "requires.sarif"}, reportfinding.SCA},
		{" osv-scanner ", []string{"osv", "testdata", "go-and-cargo.json"}, reportfinding.SCA},
		{"CycloneDX", []string{"cyclonedx", "testdata", "trivy-pom.cdx.json"}, reportfinding.SCA},
	}
	for _, c := range cases {
		rep, err := Parse(c.engine, fixture(t, c.file...))
		if err != nil || len(rep.Findings) == 0 || rep.Findings[0].Kind != c.kind {
			t.Errorf("%s %s: %v, %d findings", c.engine, c.file[len(c.file)-1], err, len(rep.Findings))
		}
	}
}

func TestErrors(t *testing.T) {
	_, err := Parse("fortify", []byte("x"))
	var unknown *UnknownEngineError
	if !errors.As(err, &unknown) || !strings.Contains(err.Error(), "sarif, semgrep, govulncheck, osv-scanner, cyclonedx") {
		t.Fatalf("unknown engine: %v", err)
	}
	// A report of another format is a clear 400, naming what is missing.
	_, err = Parse("osv-scanner", fixture(t, "semgrep", "testdata", "correctness.json"))
	var invalid *InvalidError
	if !errors.As(err, &invalid) || invalid.Problem != `results[0] has neither "source" nor "packages"` {
		t.Fatalf("osv-scanner on semgrep: %v", err)
	}
	_, err = Parse("cyclonedx", fixture(t, "osv", "testdata", "go-and-cargo.json"))
	if !errors.As(err, &invalid) || invalid.Problem != `"bomFormat" must be "CycloneDX"` {
		t.Fatalf("cyclonedx on osv: %v", err)
	}
	_, err = Parse("govulncheck", fixture(t, "semgrep", "testdata", "correctness.json"))
	if !errors.As(err, &invalid) {
		t.Fatalf("govulncheck on semgrep: %v", err)
	}
	runs := `{"version":"2.1.0","runs":[` + strings.Repeat(`{"tool":{"driver":{"name":"t"}}},`, 20) + `{"tool":{"driver":{"name":"t"}}}]}`
	_, err = Parse("sarif", []byte(runs))
	var big *TooLargeError
	if !errors.As(err, &big) || big.Limit != 20 || big.What != "runs" {
		t.Fatalf("21 runs: %v", err)
	}
}
