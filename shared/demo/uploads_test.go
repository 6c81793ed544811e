package demo_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
)

// checkUploads checks what the seed offers a visitor to upload next: a
// free run id and sample reports that exist.
func checkUploads(t *testing.T, st *store.Store, doc *demo.Document) {
	ctx := context.Background()
	seen := map[string]bool{}
	for _, c := range doc.Companies {
		run, _ := c.Resources["scan_upload_run_id"].(string)
		if _, err := st.Scans.ScanByRunID(ctx, c.ID, run); !errors.Is(err, ddb.ErrNotFound) || seen[run] {
			t.Fatalf("%s: run id %q to try is taken (%v)", c.Name, run, err)
		}
		seen[run] = true
		reports, _ := c.Resources["scan_upload_sample_reports"].([]string)
		if len(reports) == 0 {
			t.Fatalf("%s: no sample reports", c.Name)
		}
		for _, r := range reports {
			if _, err := os.Stat(filepath.Join("..", "..", r)); err != nil {
				t.Fatalf("sample report: %v", err)
			}
		}
	}
}
