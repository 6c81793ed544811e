package store

import (
	"context"
	"errors"
)

// CompanyIDs returns every company id ever allocated (ids come from one
// counter, so this is 1..counter without reading any company), for the
// scheduled jobs that visit every company.
func (s *Store) CompanyIDs(ctx context.Context) ([]int64, error) {
	var c struct {
		Value int64 `dynamodbav:"value"`
	}
	err := s.t.GetItem(ctx, Key{PK: "SEQUENCE", SK: "company"}, &c)
	if errors.Is(err, ErrNotFound) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	out := make([]int64, 0, c.Value)
	for id := int64(1); id <= c.Value; id++ {
		out = append(out, id)
	}
	return out, nil
}
