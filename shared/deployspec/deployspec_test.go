package deployspec_test

import (
	"encoding/json"
	"slices"
	"testing"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/reportstore"
)

// The deployment's copies of the report bucket's names and lifetimes are
// the code's.
func TestReportBucketNames(t *testing.T) {
	if deployspec.ReportsEnv != reportstore.EnvBucket || deployspec.ReportsPrefix != reportstore.ReportsPrefix ||
		deployspec.ChunksPrefix != reportstore.ChunksPrefix || deployspec.ReportDays != reportstore.ReportDays ||
		deployspec.ChunkDays != reportstore.ChunkDays || deployspec.SourcesPrefix != reportstore.SourcesPrefix ||
		deployspec.SourceDays != reportstore.SourceDays || deployspec.ExportsPrefix != reportstore.ExportsPrefix ||
		deployspec.ExportDays != reportstore.ExportDays {
		t.Fatal("deployspec and reportstore disagree on the report bucket")
	}
}

// At most MaxStreamReaders functions read the table's stream, each with at
// most MaxStreamFilters patterns, every pattern a JSON object selecting
// inserts and read by one function only (an item two readers select would
// be handled twice); no route function reads it.
func TestStreamReaders(t *testing.T) {
	var readers []string
	seen := map[string]string{}
	for _, f := range slices.Concat(deployspec.All(), deployspec.Workers()) {
		if !f.ReadsStream() {
			continue
		}
		readers = append(readers, f.Group)
		if len(f.StreamFilters) > deployspec.MaxStreamFilters {
			t.Errorf("%s has %d stream filters, more than the %d a mapping takes", f.Group, len(f.StreamFilters), deployspec.MaxStreamFilters)
		}
		for _, p := range f.StreamFilters {
			var pattern struct {
				EventName []string `json:"eventName"`
				DynamoDB  struct {
					NewImage map[string]any `json:"NewImage"`
				} `json:"dynamodb"`
			}
			if err := json.Unmarshal([]byte(p), &pattern); err != nil || !slices.Equal(pattern.EventName, []string{"INSERT"}) || len(pattern.DynamoDB.NewImage) == 0 {
				t.Errorf("%s: filter %s: %+v %v", f.Group, p, pattern, err)
			}
			if other, ok := seen[p]; ok {
				t.Errorf("filter %s is both %s's and %s's", p, other, f.Group)
			}
			seen[p] = f.Group
		}
	}
	if want := []string{deployspec.WorkerDispatcher, deployspec.WorkerIngester}; !slices.Equal(readers, want) || len(readers) > deployspec.MaxStreamReaders {
		t.Fatalf("stream readers %v, want %v (at most %d)", readers, want, deployspec.MaxStreamReaders)
	}
}
