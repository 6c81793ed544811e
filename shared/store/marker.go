package store

import (
	"context"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

type marker struct {
	ddb.Key
	Value string `dynamodbav:"value"`
}

// PutMarker stores a small global value (for example that the demo is seeded).
func (s *Store) PutMarker(ctx context.Context, name, value string) error {
	return s.t.PutItem(ctx, marker{Key: schema.MarkerKey(name), Value: value}, nil)
}

// GetMarker reads a value stored by PutMarker.
func (s *Store) GetMarker(ctx context.Context, name string) (string, error) {
	var m marker
	err := s.t.GetItem(ctx, schema.MarkerKey(name), &m)
	return m.Value, err
}
