// Package bulkload is what sets a table up and fills it outside the API:
// table creation for local runs, tests and tools. No Lambda links it.
package bulkload

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/tabledef"
)

// CreateTable creates st's table from tabledef (used locally and in tests;
// in AWS the stacks create it), with its stream when stream is set. When
// the table exists (a local data directory kept across restarts), it adds
// the indexes tabledef has and the table lacks (addIndexes). Only a table whose stream someone reads
// should have one: DynamoDB Local keeps every stream record of every table
// and slows down for all of them as they pile up (a test run's tables
// without streams seed the demo 10x faster by the third table).
func CreateTable(ctx context.Context, st *store.Store, stream bool) error {
	s := &ddb.Table{DB: st.Client(), Name: st.TableName()}
	var attrs []types.AttributeDefinition
	for _, n := range tabledef.AttributeNames() {
		attrs = append(attrs, types.AttributeDefinition{AttributeName: aws.String(n), AttributeType: types.ScalarAttributeTypeS})
	}
	var gsis []types.GlobalSecondaryIndex
	for _, ix := range tabledef.Indexes {
		gsis = append(gsis, types.GlobalSecondaryIndex{
			IndexName: aws.String(ix.Name),
			KeySchema: []types.KeySchemaElement{
				{AttributeName: aws.String(ix.PK), KeyType: types.KeyTypeHash},
				{AttributeName: aws.String(ix.SK), KeyType: types.KeyTypeRange},
			},
			Projection: &types.Projection{ProjectionType: types.ProjectionType(ix.Projection)},
		})
	}
	in := &dynamodb.CreateTableInput{
		TableName:            aws.String(s.Name),
		AttributeDefinitions: attrs,
		KeySchema: []types.KeySchemaElement{
			{AttributeName: aws.String(tabledef.PK), KeyType: types.KeyTypeHash},
			{AttributeName: aws.String(tabledef.SK), KeyType: types.KeyTypeRange},
		},
		GlobalSecondaryIndexes: gsis,
		BillingMode:            types.BillingModePayPerRequest,
	}
	if stream { // the notification dispatcher reads new outbox items from it (see Event)
		in.StreamSpecification = store.StreamSpec()
	}
	_, err := s.DB.CreateTable(ctx, in)
	var inUse *types.ResourceInUseException
	if errors.As(err, &inUse) {
		return addIndexes(ctx, s, attrs, gsis)
	}
	if err != nil {
		return fmt.Errorf("create table %s: %w", s.Name, err)
	}
	// Its issues are all written with their index keys, its projects with
	// their lower-cased URL: no backfill.
	for _, k := range []ddb.Key{schema.IssueKeysBackfillKey, schema.ProjectRepoBackfillKey} {
		if err := s.PutItem(ctx, schema.BackfillState{Key: k, Done: true}, nil); err != nil {
			return err
		}
	}
	return nil
}

// addIndexes creates, one at a time as DynamoDB requires, the indexes of
// gsis the existing table lacks, and waits until each is active. Items
// written before an index existed get its keys from their own backfill
// (BackfillDueIndex for Due).
func addIndexes(ctx context.Context, s *ddb.Table, attrs []types.AttributeDefinition, gsis []types.GlobalSecondaryIndex) error {
	desc, err := s.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Name)})
	if err != nil {
		return fmt.Errorf("describe table %s: %w", s.Name, err)
	}
	have := map[string]bool{}
	for _, ix := range desc.Table.GlobalSecondaryIndexes {
		have[aws.ToString(ix.IndexName)] = true
	}
	for _, ix := range gsis {
		if have[aws.ToString(ix.IndexName)] {
			continue
		}
		_, err := s.DB.UpdateTable(ctx, &dynamodb.UpdateTableInput{
			TableName: aws.String(s.Name), AttributeDefinitions: attrs,
			GlobalSecondaryIndexUpdates: []types.GlobalSecondaryIndexUpdate{{Create: &types.CreateGlobalSecondaryIndexAction{
				IndexName: ix.IndexName, KeySchema: ix.KeySchema, Projection: ix.Projection,
			}}},
		})
		if err != nil {
			return fmt.Errorf("add index %s to %s: %w", aws.ToString(ix.IndexName), s.Name, err)
		}
		if err := awaitIndex(ctx, s, aws.ToString(ix.IndexName)); err != nil {
			return err
		}
	}
	return nil
}

// awaitIndex waits until the index is active.
func awaitIndex(ctx context.Context, s *ddb.Table, name string) error {
	for {
		desc, err := s.DB.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(s.Name)})
		if err != nil {
			return fmt.Errorf("describe table %s: %w", s.Name, err)
		}
		for _, ix := range desc.Table.GlobalSecondaryIndexes {
			if aws.ToString(ix.IndexName) == name && ix.IndexStatus == types.IndexStatusActive {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-time.After(200 * time.Millisecond):
		}
	}
}
