package findings

import (
	"github.com/acme/codescan-api/shared/store/internal/lease"
)

// Fenced writes. A scan's writes to its branch are made under the lease
// of the branch's head, and every one that can move a count is fenced
// (internal/lease's Fence): a transaction carries a condition check on the
// head naming the holding, so a holder frozen past its lease cannot write
// after the next holder took the branch (and settled, or applied, what the
// counters owe). The fence rides on the context of the holder's work
// (withFence), so the write path's transactions (commitIssues, the journal
// payments, the counter settlements) are fenced under a lease and
// unchanged for triage and the loaders, which hold none.
//
// The writes left unfenced cannot move a count, late or not:
//   - the scan's membership chunks (scans.PutMembers): only a completed
//     scan's members are read as a branch's truth, and completing names
//     the scan on the head in a fenced transaction; a late chunk rewrites
//     what any attempt of the same scan writes;
//   - a journal's items and brief (scanjournal's write): only the marker names
//     their generation, written in a fenced transaction; items of a
//     generation no marker names are never paid, and expire;
//   - the lease's own extension and release, conditional on the owner.

// ErrLeaseLost is the error (wrapped, with ddb.ErrUnavailable: try again)
// of an apply whose lease on its branch was lost while it wrote: the
// extension was refused, or a fenced write was. The apply stopped and is
// to be started again from scratch, under a new lease.
var ErrLeaseLost = lease.ErrLost
