package config

import (
	"fmt"
	"time"
)

// DefaultExportLinkTTL is how long an export's download link works unless
// EXPORT_LINK_MINUTES says otherwise.
const DefaultExportLinkTTL = 15 * time.Minute

// maxExportLinkMinutes is the longest a presigned link may live (SigV4:
// seven days).
const maxExportLinkMinutes = 7 * 24 * 60

// ExportLinkTTL reads EXPORT_LINK_MINUTES (1 to 10,080; default 15).
func ExportLinkTTL() (time.Duration, error) {
	n, err := intEnv("EXPORT_LINK_MINUTES", int(DefaultExportLinkTTL/time.Minute))
	if err != nil || n < 1 || n > maxExportLinkMinutes {
		return 0, fmt.Errorf("EXPORT_LINK_MINUTES must be 1 to %d", maxExportLinkMinutes)
	}
	return time.Duration(n) * time.Minute, nil
}
