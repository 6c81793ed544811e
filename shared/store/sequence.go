package store

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// NextID returns the next integer id of a global sequence (atomic ADD).
func (s *Store) NextID(ctx context.Context, sequence string) (int64, error) {
	var out struct {
		Value int64 `dynamodbav:"value"`
	}
	upd := expression.Add(expression.Name("value"), expression.Value(1))
	if err := s.t.Upsert(ctx, Key{PK: "SEQUENCE", SK: sequence}, upd, &out); err != nil {
		return 0, err
	}
	return out.Value, nil
}
