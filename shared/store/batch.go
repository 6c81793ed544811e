package store

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
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
			if err := backoff(ctx, attempt); err != nil {
				return err
			}
			res, err := call(func() (*dynamodb.BatchWriteItemOutput, error) {
				return s.DB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
					RequestItems:           map[string][]types.WriteRequest{s.Table: reqs},
					ReturnConsumedCapacity: total,
				})
			})
			if err != nil {
				return fmt.Errorf("batch write: %w", err)
			}
			recordBatch(ctx, writing, res.ConsumedCapacity)
			reqs = res.UnprocessedItems[s.Table]
		}
	}
	return nil
}

// batchWriters bounds the concurrent write calls of parallel.
const batchWriters = 8

// parallel runs do(0..n-1) on batchWriters goroutines and returns the
// first error.
func (s *Store) parallel(ctx context.Context, n int, do func(int) error) error {
	var wg sync.WaitGroup
	errs := make([]error, n)
	sem := make(chan struct{}, batchWriters)
	for i := range n {
		if ctx.Err() != nil {
			errs[i] = ctx.Err()
			break
		}
		wg.Add(1)
		sem <- struct{}{}
		go func() {
			defer func() { <-sem; wg.Done() }()
			errs[i] = do(i)
		}()
	}
	wg.Wait()
	return errors.Join(errs...)
}

// batchPutParallel is batchPut with the batches sent concurrently.
func (s *Store) batchPutParallel(ctx context.Context, items []any) error {
	const per = 25
	return s.parallel(ctx, (len(items)+per-1)/per, func(n int) error {
		return s.batchPut(ctx, items[n*per:min((n+1)*per, len(items))])
	})
}

// batchGet reads keys with strongly consistent reads (the write path decides
// on them) and returns the items found, by key.
func (s *Store) batchGet(ctx context.Context, keys []Key) (map[Key]map[string]types.AttributeValue, error) {
	return s.readBatch(ctx, keys, true)
}

// readBatch reads keys, strongly consistent or not, 100 to a request with
// the requests sent concurrently (a scan's 25,000 issue ids are 250 of
// them), and returns the items found, by key.
func (s *Store) readBatch(ctx context.Context, keys []Key, consistent bool) (map[Key]map[string]types.AttributeValue, error) {
	const per = 100
	pages := make([][]map[string]types.AttributeValue, (len(keys)+per-1)/per)
	err := s.parallel(ctx, len(pages), func(n int) error {
		var err error
		pages[n], err = s.getPage(ctx, keys[n*per:min((n+1)*per, len(keys))], consistent)
		return err
	})
	if err != nil {
		return nil, err
	}
	out := make(map[Key]map[string]types.AttributeValue, len(keys))
	for _, page := range pages {
		for _, item := range page {
			var k Key
			if err := attributevalue.UnmarshalMap(item, &k); err != nil {
				return nil, err
			}
			out[k] = item
		}
	}
	return out, nil
}

// getPage reads at most 100 keys with one BatchGetItem, resending what
// DynamoDB leaves unprocessed.
func (s *Store) getPage(ctx context.Context, keys []Key, consistent bool) ([]map[string]types.AttributeValue, error) {
	pending := make([]map[string]types.AttributeValue, len(keys))
	for n, k := range keys {
		pending[n] = k.av()
	}
	var out []map[string]types.AttributeValue
	for attempt := 0; len(pending) > 0; attempt++ {
		if err := backoff(ctx, attempt); err != nil {
			return nil, err
		}
		res, err := call(func() (*dynamodb.BatchGetItemOutput, error) {
			return s.DB.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
				RequestItems: map[string]types.KeysAndAttributes{
					s.Table: {Keys: pending, ConsistentRead: aws.Bool(consistent)},
				},
				ReturnConsumedCapacity: total,
			})
		})
		if err != nil {
			return nil, fmt.Errorf("batch get: %w", err)
		}
		recordBatch(ctx, reading, res.ConsumedCapacity)
		out = append(out, res.Responses[s.Table]...)
		pending = res.UnprocessedKeys[s.Table].Keys
	}
	return out, nil
}

// backoff waits before a batch request resends what the previous one left
// unprocessed (DynamoDB's advice: resending at once meets the same
// throttling). The first attempt does not wait.
func backoff(ctx context.Context, attempt int) error {
	if attempt == 0 {
		return nil
	}
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-time.After(time.Duration(min(10<<min(attempt, 7), 1000)) * time.Millisecond):
		return nil
	}
}

// recordBatch records a batch response's consumed capacity.
func recordBatch(ctx context.Context, write bool, caps []types.ConsumedCapacity) {
	ptrs := make([]*types.ConsumedCapacity, len(caps))
	for n := range caps {
		ptrs[n] = &caps[n]
	}
	record(ctx, write, ptrs...)
}

// byID reads the items of ids by key (eventually consistent: for answers,
// not for decisions) and maps them by id.
func byID[T any](ctx context.Context, s *Store, ids []int64, key func(int64) Key, id func(T) int64) (map[int64]T, error) {
	keys := make([]Key, 0, len(ids))
	seen := map[int64]bool{}
	for _, i := range ids {
		if !seen[i] {
			seen[i] = true
			keys = append(keys, key(i))
		}
	}
	got, err := s.readBatch(ctx, keys, false)
	if err != nil {
		return nil, err
	}
	out := make(map[int64]T, len(got))
	for _, item := range got {
		var v T
		if err := attributevalue.UnmarshalMap(item, &v); err != nil {
			return nil, err
		}
		out[id(v)] = v
	}
	return out, nil
}
