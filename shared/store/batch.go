package store

import (
	"context"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/attributevalue"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
)

// batchPut writes items unconditionally, 25 to a request, resending what
// DynamoDB leaves unprocessed. Only for items that no counter depends on.
func (s *Store) batchPut(ctx context.Context, items []any) error {
	for start := 0; start < len(items); start += 25 {
		var reqs []types.WriteRequest
		for _, it := range items[start:min(start+25, len(items))] {
			av, err := attributevalue.MarshalMap(it)
			if err != nil {
				return fmt.Errorf("marshal item: %w", err)
			}
			reqs = append(reqs, types.WriteRequest{PutRequest: &types.PutRequest{Item: av}})
		}
		for attempt := 0; len(reqs) > 0; attempt++ {
			if attempt > 0 {
				select {
				case <-ctx.Done():
					return ctx.Err()
				case <-time.After(time.Duration(min(10<<attempt, 1000)) * time.Millisecond):
				}
			}
			res, err := s.DB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
				RequestItems:           map[string][]types.WriteRequest{s.Table: reqs},
				ReturnConsumedCapacity: total,
			})
			if err != nil {
				return fmt.Errorf("batch write: %w", err)
			}
			caps := make([]*types.ConsumedCapacity, len(res.ConsumedCapacity))
			for n := range res.ConsumedCapacity {
				caps[n] = &res.ConsumedCapacity[n]
			}
			record(ctx, writing, caps...)
			reqs = res.UnprocessedItems[s.Table]
		}
	}
	return nil
}
