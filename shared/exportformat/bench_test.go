package exportformat_test

import (
	"fmt"
	"io"
	"runtime"
	"testing"

	"github.com/acme/codescan-api/shared/exploitfeed"
	"github.com/acme/codescan-api/shared/exportformat"
)

// BenchmarkExport200k streams 200,000 findings per format to io.Discard
// and reports the peak heap in use (sampled every 10,000 rows) beside the
// time: the peak must not grow with the rows. The rows are made on the fly,
// as a paging query would, a tenth of them SCA findings enriched with KEV
// and EPSS, spread over 4 tools and 200 rules.
func BenchmarkExport200k(b *testing.B) {
	const rows = 200_000
	k := exploitfeed.KEV{DateAdded: "2021-12-10", DueDate: "2021-12-24", KnownRansomwareUse: true, VendorProject: "Apache",
		Product: "Log4j2", Name: "Apache Log4j2 Remote Code Execution Vulnerability"}
	e := exploitfeed.EPSS{Score: 0.94358, Percentile: 0.9996, Date: "2026-03-28"}
	tools := []string{"gosec", "semgrep", "bandit", "osv-scanner"}
	statuses := []string{"open", "fixed", "false_positive", "accepted_risk", "fix_in_progress"}
	for _, f := range exportformat.Formats {
		b.Run(string(f), func(b *testing.B) {
			var peak uint64
			var ms runtime.MemStats
			src := func(yield func(exportformat.Row) error) error {
				for i := range rows {
					r := exportformat.Row{ID: fmt.Sprintf("%08x-0000-4000-8000-%012x", i, i), Project: "payments", Branch: "main",
						Tool: tools[i%len(tools)], Rule: fmt.Sprintf("R%03d", i%200), Title: "SQL built from user input",
						CWE: 89, Path: fmt.Sprintf("internal/pkg%d/file%d.go", i%97, i%13), Line: i%500 + 1,
						Urgency: "HI", Status: statuses[i%len(statuses)], FirstSeen: t0, LastSeen: t1}
					if i%10 == 0 {
						r.Tool, r.Package, r.Ecosystem, r.Version = "osv-scanner", fmt.Sprintf("example.com/mod%d", i%500), "Go", "1.2.3"
						r.FixedVersion, r.Advisories = "1.2.4", []string{"CVE-2021-44228", "GHSA-jfh8-c2jp-5v3q"}
						r.Exploit = &exportformat.Exploit{KEV: &k, EPSS: &e}
					}
					if i%10_000 == 0 {
						runtime.ReadMemStats(&ms)
						peak = max(peak, ms.HeapInuse)
					}
					if err := yield(r); err != nil {
						return err
					}
				}
				return nil
			}
			b.ReportAllocs()
			for b.Loop() {
				n, err := exportformat.Write(io.Discard, f, src, exportformat.Options{Project: "payments"})
				if err != nil {
					b.Fatal(err)
				}
				if f != exportformat.VEX && n != rows {
					b.Fatalf("%d rows written", n)
				}
			}
			b.ReportMetric(float64(peak)/(1<<20), "peak-heap-MiB")
		})
	}
}
