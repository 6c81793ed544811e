package gate

// Identity is a finding's identity within its project, the same on every
// branch: its tool and fingerprint (an issue's Tool and Fingerprint).
type Identity struct {
	Tool, Fingerprint string
}

// Baseline is what is known of the baseline branch a gate compares with
// (by default the project's default branch).
type Baseline struct {
	Branch string
	// ScanID is the branch's latest complete scan, "" when it has none.
	ScanID string
	// Open holds the identities open on that scan.
	Open map[Identity]bool
}

// Summary is the answer's account of the comparison, an additive member
// of the gate's answer and of a scan's issue list.
type Summary struct {
	Branch string `json:"branch"`
	// ScanID is the baseline scan compared with; null when none was.
	ScanID *string `json:"scan_id"`
	// Counted findings are judged; LeftOut ones are not, for Reason.
	Counted int    `json:"counted"`
	LeftOut int    `json:"left_out"`
	Reason  string `json:"reason"`
}

// Comparison splits a scan's findings against a baseline, each list in the
// order given.
type Comparison[T any] struct {
	Counted, LeftOut []T
	Summary          Summary
}

// Compare leaves out of items those whose identity is open on the
// baseline's latest complete scan: what a change adds is judged, not what
// it inherits. Nothing is left out when the baseline has no complete scan
// (the gate then judges everything, as without a baseline), or when the
// scan is of the baseline branch itself (its findings are the baseline's;
// comparing would leave them all out). A finding without a fingerprint
// cannot be recognised and is counted.
func Compare[T any](b Baseline, scanBranch string, items []T, identity func(T) Identity) Comparison[T] {
	c := Comparison[T]{Summary: Summary{Branch: b.Branch}}
	switch {
	case scanBranch == b.Branch:
		c.Counted = items
		c.Summary.Reason = "the scan is of " + b.Branch + ", the baseline; all findings counted"
	case b.ScanID == "":
		c.Counted = items
		c.Summary.Reason = "no complete scan of " + b.Branch + "; all findings counted"
	default:
		c.Summary.ScanID = &b.ScanID
		c.Summary.Reason = "already open on " + b.Branch
		for _, it := range items {
			if id := identity(it); id.Fingerprint != "" && b.Open[id] {
				c.LeftOut = append(c.LeftOut, it)
			} else {
				c.Counted = append(c.Counted, it)
			}
		}
	}
	c.Summary.Counted, c.Summary.LeftOut = len(c.Counted), len(c.LeftOut)
	return c
}
