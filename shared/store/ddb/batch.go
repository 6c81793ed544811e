package ddb

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

// BatchPut writes items unconditionally, 25 to a request, resending what
// DynamoDB leaves unprocessed. Only for items that no counter depends on.
func (t *Table) BatchPut(ctx context.Context, items []any) error {
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
			if err := Backoff(ctx, attempt); err != nil {
				return err
			}
			res, err := Call(func() (*dynamodb.BatchWriteItemOutput, error) {
				return t.DB.BatchWriteItem(ctx, &dynamodb.BatchWriteItemInput{
					RequestItems:           map[string][]types.WriteRequest{t.Name: reqs},
					ReturnConsumedCapacity: Total,
				})
			})
			if err != nil {
				return fmt.Errorf("batch write: %w", err)
			}
			RecordBatch(ctx, Writing, res.ConsumedCapacity)
			reqs = res.UnprocessedItems[t.Name]
		}
	}
	return nil
}

// batchWriters bounds the concurrent write calls of parallel.
const batchWriters = 8

// Parallel runs do(0..n-1) on batchWriters goroutines and returns the
// first error.
func (t *Table) Parallel(ctx context.Context, n int, do func(int) error) error {
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

// BatchPutParallel is batchPut with the batches sent concurrently.
func (t *Table) BatchPutParallel(ctx context.Context, items []any) error {
	const per = 25
	return t.Parallel(ctx, (len(items)+per-1)/per, func(n int) error {
		return t.BatchPut(ctx, items[n*per:min((n+1)*per, len(items))])
	})
}

// BatchGet reads keys with strongly consistent reads (the write path decides
// on them) and returns the items found, by key.
func (t *Table) BatchGet(ctx context.Context, keys []Key) (map[Key]map[string]types.AttributeValue, error) {
	return t.ReadBatch(ctx, keys, true)
}

// ReadBatch reads keys, strongly consistent or not, 100 to a request with
// the requests sent concurrently (a scan's 25,000 issue ids are 250 of
// them), and returns the items found, by key.
func (t *Table) ReadBatch(ctx context.Context, keys []Key, consistent bool) (map[Key]map[string]types.AttributeValue, error) {
	const per = 100
	pages := make([][]map[string]types.AttributeValue, (len(keys)+per-1)/per)
	err := t.Parallel(ctx, len(pages), func(n int) error {
		var err error
		pages[n], err = t.getPage(ctx, keys[n*per:min((n+1)*per, len(keys))], consistent)
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
func (t *Table) getPage(ctx context.Context, keys []Key, consistent bool) ([]map[string]types.AttributeValue, error) {
	pending := make([]map[string]types.AttributeValue, len(keys))
	for n, k := range keys {
		pending[n] = k.AV()
	}
	var out []map[string]types.AttributeValue
	for attempt := 0; len(pending) > 0; attempt++ {
		if err := Backoff(ctx, attempt); err != nil {
			return nil, err
		}
		res, err := Call(func() (*dynamodb.BatchGetItemOutput, error) {
			return t.DB.BatchGetItem(ctx, &dynamodb.BatchGetItemInput{
				RequestItems: map[string]types.KeysAndAttributes{
					t.Name: {Keys: pending, ConsistentRead: aws.Bool(consistent)},
				},
				ReturnConsumedCapacity: Total,
			})
		})
		if err != nil {
			return nil, fmt.Errorf("batch get: %w", err)
		}
		RecordBatch(ctx, Reading, res.ConsumedCapacity)
		out = append(out, res.Responses[t.Name]...)
		pending = res.UnprocessedKeys[t.Name].Keys
	}
	return out, nil
}

// Backoff waits before a batch request resends what the previous one left
// unprocessed (DynamoDB's advice: resending at once meets the same
// throttling). The first attempt does not wait.
func Backoff(ctx context.Context, attempt int) error {
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

// ByID reads the items of ids by key (eventually consistent: for answers,
// not for decisions) and maps them by id.
func ByID[T any](ctx context.Context, t *Table, ids []int64, key func(int64) Key, id func(T) int64) (map[int64]T, error) {
	keys := make([]Key, 0, len(ids))
	seen := map[int64]bool{}
	for _, i := range ids {
		if !seen[i] {
			seen[i] = true
			keys = append(keys, key(i))
		}
	}
	got, err := t.ReadBatch(ctx, keys, false)
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
