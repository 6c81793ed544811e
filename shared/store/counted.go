package store

import (
	"context"

	"github.com/acme/codescan-api/shared/store/internal/counted"
	"github.com/acme/codescan-api/shared/store/internal/schema"
	"github.com/acme/codescan-api/shared/store/page"
)

// The counted write's pieces, for the facade's bulk writers (SCA and
// quality findings; see internal/counted).
type (
	counterRef  = counted.Ref
	countedItem = counted.Item
)

// maxMillis inverts creation times so that ascending keys are newest first.
const maxMillis = schema.MaxMillis

func countJournalPK(companyID int64, scope string) string { return counted.JournalPK(companyID, scope) }

// putCounted writes items through the journal partition journal (see
// counted.Put).
func (s *Store) putCounted(ctx context.Context, journal string, items []countedItem) error {
	return counted.Put(ctx, s.t, journal, items)
}

// countedPage reads one page of l into out and its collection's company
// count (see counted.Page).
func (s *Store) countedPage(ctx context.Context, companyID int64, l page.List, q PageQuery, out any, collection string) (PageResult, int, error) {
	return counted.Page(ctx, s.t, s.l, companyID, l, q, out, collection)
}
