package scans_test

import (
	"context"
	"fmt"
	"slices"
	"testing"

	"github.com/acme/codescan-api/shared/store/scans"
)

// A scan's membership written again with other ids (a redelivered
// ingestion whose findings matched other issues, because another scan of
// the branch came first) holds exactly the second attempt's ids: no chunk
// of the first is left to list its issues twice or name issues never
// written. Written again with the same ids, it is unchanged.
func TestMembersWrittenAgainReplaceTheFirstAttempts(t *testing.T) {
	t.Parallel()
	_, tb := newArea(t)
	ctx := context.Background()
	ids := func(prefix string, n int) []string {
		var out []string
		for i := range n {
			out = append(out, fmt.Sprintf("%s%04d", prefix, i))
		}
		return out
	}
	first, second := ids("a", scans.MemberChunk+10), ids("b", 8)
	for _, attempt := range [][]string{first, second, slices.Clone(second)} {
		if err := scans.PutMembers(ctx, tb, 9, "scan-1", slices.Clone(attempt), nil); err != nil {
			t.Fatal(err)
		}
		got, err := scans.MemberIDs(ctx, tb, 9, "scan-1")
		if err != nil || !slices.Equal(got, attempt) {
			t.Fatalf("members %v (%v), want %v", got, err, attempt)
		}
	}
	other, err := scans.MemberIDs(ctx, tb, 9, "scan-2")
	if err != nil || len(other) != 0 {
		t.Fatalf("another scan's members: %v %v", other, err)
	}
}
