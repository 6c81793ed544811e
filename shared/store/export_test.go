package store

import (
	"context"

	"github.com/acme/codescan-api/shared/store/ddb"

	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/aws/aws-sdk-go-v2/feature/dynamodb/expression"
)

// Internals exposed to the external tests (which need testenv, which
// imports this package).

// Update and PutItem are the table layer's, for tests that write items
// directly.
func Update(s *Store, ctx context.Context, k ddb.Key, upd expression.UpdateBuilder, extra *expression.ConditionBuilder, out any) error {
	return s.t.Update(ctx, k, upd, extra, out)
}

func PutItem(s *Store, ctx context.Context, item any, cond *expression.ConditionBuilder) error {
	return s.t.PutItem(ctx, item, cond)
}

// For FuzzListPageTokens: lists whose tokens the fuzzer seals as an
// attacker can (the checksum is no secret).
var (
	TeamList        = catalog.TeamList
	IntegrationList = catalog.IntegrationList
)
