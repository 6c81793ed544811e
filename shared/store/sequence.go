package store

import "context"

// NextID returns the next integer id of a global sequence (atomic ADD).
func (s *Store) NextID(ctx context.Context, sequence string) (int64, error) {
	return s.l.NextID(ctx, sequence)
}
