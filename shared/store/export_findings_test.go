package store

import (
	"context"
	"fmt"

	"github.com/acme/codescan-api/shared/store/internal/ddb"
	"github.com/acme/codescan-api/shared/store/internal/schema"
)

// PartitionItems reads every item of a partition as plain values, so tests
// can compare what two write paths stored.
func PartitionItems(ctx context.Context, s *Store, pk string) ([]map[string]any, error) {
	var out []map[string]any
	err := s.t.QueryAll(ctx, "", ddb.PKBeginsWith(pk, ""), true, &out)
	return out, err
}

// CompanyPartitions are the partitions holding a company's findings: its own
// and its issues'.
func CompanyPartitions(companyID int64) []string {
	out := []string{CompanyPK(companyID)}
	for shard := range 256 {
		out = append(out, schema.IssueShardPK(companyID, fmt.Sprintf("%02x", shard)))
	}
	return out
}
