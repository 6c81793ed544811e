package store

import "context"

// PartitionItems reads every item of a partition as plain values, so tests
// can compare what two write paths stored.
func PartitionItems(ctx context.Context, s *Store, pk string) ([]map[string]any, error) {
	var out []map[string]any
	err := s.queryAll(ctx, "", pkBeginsWith(pk, ""), true, &out)
	return out, err
}
