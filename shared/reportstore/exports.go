package reportstore

import (
	"context"
	"fmt"
	"io"
	"time"
)

// ExportsPrefix is where exports of findings are written (then read
// through time-limited links); the bucket's lifecycle rule removes them
// after ExportDays, as the export items expire (store/exports.Lifetime).
const (
	ExportsPrefix = "exports/"
	ExportDays    = 3
)

// ExportKey is the object of one export: the same key on every attempt of
// the worker, so a retry replaces what an earlier attempt wrote.
func ExportKey(companyID int64, exportID, ext string) string {
	return fmt.Sprintf("%s%d/%s%s", ExportsPrefix, companyID, exportID, ext)
}

// Exports is what exports need of the bucket: an object written as it
// streams, and a link that reads one for a while.
type Exports interface {
	// Create starts the object at key. Nothing is visible at key until the
	// writer's Close succeeds; Abort discards what was written.
	Create(ctx context.Context, key, contentType string) (ObjectWriter, error)
	// Link is a URL that reads the object at key until expiry has passed,
	// downloaded under filename.
	Link(ctx context.Context, key, filename string, expiry time.Duration) (string, error)
}

// ObjectWriter streams one object; Close completes it.
type ObjectWriter interface {
	io.WriteCloser
	Abort() error
}
