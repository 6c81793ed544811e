package tickets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"

	"github.com/acme/codescan-api/shared/store/findings"
	"github.com/acme/codescan-api/shared/store/sca"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	"github.com/acme/codescan-api/shared/triagemodel"
)

// Groupings of a rule's tickets.
const (
	GroupFinding = "finding" // one ticket per finding
	GroupRule    = "rule"    // per tool rule and project
	GroupCWE     = "cwe"     // per CWE and project (code findings only)
	GroupPackage = "package" // per package and project (SCA findings only)
)

// Groupings are the groupings a rule may take.
var Groupings = []string{GroupFinding, GroupRule, GroupCWE, GroupPackage}

// SCARule reports whether a rule tickets SCA findings rather than code
// findings: its matcher names a package or an ecosystem (which no code
// finding has), or its grouping is package. Every other rule stays with
// code findings, as before SCA findings were ticketed: a rule written
// for code findings (an urgency, a tool) opens no dependency tickets.
func SCARule(r schema.TicketRule) bool {
	return r.Matcher.Package != "" || r.Matcher.Ecosystem != "" || r.Grouping == GroupPackage
}

// SCAPrefix marks an SCA finding's id among a ticket's findings (the
// link's issue_ids): the two kinds are separate items.
const SCAPrefix = storetickets.SCAPrefix

// scaID is the id an SCA finding has among a ticket's findings.
func scaID(id string) string { return SCAPrefix + id }

// MatchesSCA reports whether an SCA rule takes an SCA finding of a scan,
// with the triage rules' semantics (store/sca): the subject's path is the
// manifest, its urgency the severity's, and rule_id matches any of the
// finding's advisory ids (its primary one, its CVE, its other ids).
func MatchesSCA(r schema.TicketRule, i sca.Issue, scanID, defaultBranch string) bool {
	if !SCARule(r) || (r.ProjectID != 0 && r.ProjectID != i.ProjectID) {
		return false
	}
	m := r.Matcher
	if m.RuleID != "" && !slices.Contains(advisories(i), m.RuleID) {
		return false
	}
	m.RuleID = "" // checked above, against every advisory id
	s := triagemodel.Subject{ProjectID: i.ProjectID, Tool: i.Tool, CWE: i.CWE, Path: i.Location.Path,
		Package: i.Package.Name, Ecosystem: i.Package.Ecosystem, Urgency: sca.Urgency(i.Severity)}
	if !m.Match(s) {
		return false
	}
	return !m.NewOnDefaultBranch || (defaultBranch != "" && i.Branch == defaultBranch && i.ScanID == scanID)
}

// advisories are an SCA finding's advisory ids, once each, primary first.
func advisories(i sca.Issue) []string {
	var out []string
	for _, id := range append([]string{i.Classification, i.CVE}, i.IDs...) {
		if id != "" && !slices.Contains(out, id) {
			out = append(out, id)
		}
	}
	return out
}

// advisory is the id an SCA finding's advisory groups by: its CVE, else
// its primary advisory (GHSA, GO-…).
func advisory(i sca.Issue) string {
	if i.CVE != "" {
		return i.CVE
	}
	return i.Classification
}

// SCAGroupKey is the group an SCA finding's ticket is for: per finding,
// per advisory and project (rule), per package and project (package:
// every advisory and version of one package of one ecosystem).
func SCAGroupKey(grouping string, i sca.Issue) string {
	hash := func(parts ...string) string {
		sum := sha256.Sum256([]byte(strings.Join(parts, "\x00")))
		return hex.EncodeToString(sum[:8])
	}
	switch grouping {
	case GroupRule:
		return fmt.Sprintf("p%d-adv-%s", i.ProjectID, hash(strings.ToUpper(advisory(i))))
	case GroupPackage:
		return fmt.Sprintf("p%d-pkg-%s", i.ProjectID, hash(strings.ToLower(ecosystemBase(i.Package.Ecosystem)), i.Package.Name))
	default:
		return "sca-" + i.ID
	}
}

// ecosystemBase drops an OSV ecosystem's release ("Debian:12").
func ecosystemBase(e string) string {
	base, _, _ := strings.Cut(e, ":")
	return base
}

// Reported reports whether a source still reports an SCA finding: a
// tool's scan of the branch that no longer reports it takes the tool out
// of its sources (store/sca), and a finding no source reports is gone.
func Reported(i sca.Issue) bool { return len(i.SourceList()) > 0 }

// Matches reports whether a code rule's matcher takes an issue of a scan:
// the triage rules' matcher, and, with new_on_default_branch, only an
// issue the scan itself first reported on the project's default branch.
func Matches(r schema.TicketRule, i findings.Issue, scanID, defaultBranch string) bool {
	if SCARule(r) || r.ProjectID != 0 && r.ProjectID != i.ProjectID {
		return false
	}
	m := r.Matcher
	s := triagemodel.Subject{ProjectID: i.ProjectID, Tool: i.Tool, RuleID: i.RuleID, CWE: i.CWE, Path: i.FilePath, Urgency: i.Urgency}
	if !m.Match(s) {
		return false
	}
	return !m.NewOnDefaultBranch || (defaultBranch != "" && i.Branch == defaultBranch && i.ScanID == scanID)
}

// GroupKey is the group an issue's ticket is for under a grouping.
func GroupKey(grouping string, i findings.Issue) string {
	switch grouping {
	case GroupCWE:
		return fmt.Sprintf("p%d-cwe-%d", i.ProjectID, i.CWE)
	case GroupRule:
		sum := sha256.Sum256([]byte(i.Tool + "\x00" + i.RuleID))
		return fmt.Sprintf("p%d-rule-%s", i.ProjectID, hex.EncodeToString(sum[:8]))
	default:
		return "f-" + i.ID
	}
}

// Open reports whether an issue is one a ticket asks work on.
func Open(status string) bool { return status == "open" || status == "fix_in_progress" }
