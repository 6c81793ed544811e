package findings

// Suppressed findings. A report may say that the scanned code suppresses
// a finding (a `nosemgrep`, `#nosec` or `//lint:ignore` comment the tool
// honoured); ingestion then gives the found issue the status Suppressed and
// the suppression's justification as its reason. A suppressed issue is
// counted under its own status, so it is in no open count, has no SLA
// deadline (due.go indexes open issues only), triggers no new-issue event
// and is never judged by the gate. A complete scan of the tool on the
// branch moves an existing issue it reports:
//
//   - open or fix_in_progress, now suppressed    -> suppressed ("suppressed in the code")
//   - fixed, reported again suppressed           -> suppressed (not a reopening)
//   - suppressed, reported without it            -> open ("suppression removed")
//   - suppressed, with another justification     -> suppressed, the new reason
//   - false_positive, accepted_risk or duplicate -> kept: people's triage outranks the code
//
// and a suppressed issue the scan does not report becomes fixed, as an
// open one does: whether the finding is still in the code is a fact of
// the branch's scans.

// reportedStatus is the status an existing issue e takes when a complete
// scan reports it as f (whose status is Suppressed or open), and the
// history's reason for the move ("" when the status stays).
func reportedStatus(e, f Issue) (status, reason string) {
	suppressed := f.Status == Suppressed
	switch {
	case e.Status == "fixed" && suppressed:
		return Suppressed, "reported again, suppressed in the code"
	case e.Status == "fixed":
		return "open", "reported again"
	case suppressed && (e.Status == "open" || e.Status == "fix_in_progress"):
		return Suppressed, "suppressed in the code"
	case e.Status == Suppressed && !suppressed:
		return "open", "suppression removed"
	}
	return e.Status, ""
}

// fixable reports whether an issue a complete scan no longer reports
// becomes fixed: triage (people's dismissals) stays.
func fixable(status string) bool {
	return status == "open" || status == "fix_in_progress" || status == Suppressed
}
