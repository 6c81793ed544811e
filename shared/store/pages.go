package store

import (
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/page"
)

// ErrBadPageToken is a page token the list did not issue (another list's,
// another company's, or an edited one): every list answers it alike.
var ErrBadPageToken = page.ErrBadToken

// PageQuery asks for one page of a list: Limit items after Token when it
// is set (the list's token from the page before), else after the first
// Offset items (a page by number).
type PageQuery = page.Request

// PageResult is where a page lies: the position of its first item and the
// next page's token ("" when no item follows).
type PageResult = page.Result

// OffsetKeys are the Offset index attributes a list item carries (see
// page.List.OffsetPartition).
type OffsetKeys = schema.OffsetKeys
