package vex

import (
	"fmt"
	"strings"
)

// MaxReasonBytes bounds the reason a statement gives a finding (the
// triage reason's bound).
const MaxReasonBytes = 2000

// Statuses of an SCA finding the effects read and set.
const (
	statusOpen          = "open"
	statusFalsePositive = "false_positive"
	statusAcceptedRisk  = "accepted_risk"
	statusFixInProgress = "fix_in_progress"
)

// Effect is what statement n does to finding f:
//
//   - not_affected: an open or fix_in_progress finding becomes
//     false_positive, its reason the justification and impact statement
//     and the document's id; a false_positive one with that reason is
//     unchanged; another false_positive keeps its reason and an
//     accepted_risk is kept (a person's decision), both skipped;
//   - affected, under_investigation: a false_positive finding is open
//     again, with the statement as its reason; open and fix_in_progress
//     are unchanged; accepted_risk is kept (a risk accepted is one
//     acknowledged as affecting);
//   - fixed: skipped, left to the scans (a scan that no longer reports
//     it is the evidence);
//   - a CycloneDX vulnerability without an analysis state: skipped.
func (x *Index) Effect(n int, f Finding) Outcome {
	st := x.doc.Statements[n]
	o := Outcome{Statement: n, Finding: f, To: f.Status, Reason: f.Reason}
	reason := x.reason(st)
	switch st.Status {
	case NotAffected:
		switch f.Status {
		case statusOpen, statusFixInProgress:
			return changed(o, statusFalsePositive, reason)
		case statusFalsePositive:
			if f.Reason == reason {
				return kept(o, Unchanged, "already false_positive from this statement")
			}
			return kept(o, Skipped, "already false_positive; its reason is kept")
		case statusAcceptedRisk:
			return kept(o, Skipped, "accepted_risk is a person's decision; kept")
		}
	case Affected, UnderInvestigation:
		switch f.Status {
		case statusFalsePositive:
			return changed(o, statusOpen, reason)
		case statusOpen, statusFixInProgress:
			return kept(o, Unchanged, "already "+f.Status)
		case statusAcceptedRisk:
			return kept(o, Skipped, "accepted_risk acknowledges an affected finding; kept")
		}
	case Fixed:
		return kept(o, Skipped, "fixed: left to the scans")
	case "":
		return kept(o, Skipped, "no analysis state: not a VEX statement")
	}
	return kept(o, Skipped, fmt.Sprintf("status %s is kept", f.Status))
}

func changed(o Outcome, to, reason string) Outcome {
	o.Result, o.To, o.Reason = Changed, to, reason
	return o
}

func kept(o Outcome, result, why string) Outcome {
	o.Result, o.Why = result, why
	return o
}

// reason is the reason a statement gives a finding: its status, its
// justification and detail (or action), and the document it came from,
// at most MaxReasonBytes (the statement's text is cut, the source never).
func (x *Index) reason(st Statement) string {
	var parts []string
	if st.Justification != "" {
		parts = append(parts, st.Justification)
	}
	detail := st.Detail
	if st.Status != NotAffected && st.Action != "" {
		detail = firstOf(st.Action, st.Detail)
	}
	if detail != "" {
		parts = append(parts, detail)
	}
	head := "VEX " + st.Status
	if len(parts) > 0 {
		head += ": " + strings.Join(parts, ": ")
	}
	tail := " (from VEX " + x.doc.ID + ")"
	return clip(head, MaxReasonBytes-len(tail)) + tail
}
