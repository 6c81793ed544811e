package tickets

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"

	"github.com/acme/codescan-api/shared/store"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	"github.com/acme/codescan-api/shared/triagerule"
)

// Groupings of a rule's tickets.
const (
	GroupFinding = "finding" // one ticket per finding
	GroupRule    = "rule"    // per tool rule and project
	GroupCWE     = "cwe"     // per CWE and project
)

// Groupings are the groupings a rule may take.
var Groupings = []string{GroupFinding, GroupRule, GroupCWE}

// Matches reports whether a rule's matcher takes an issue of a scan:
// the triage rules' matcher, and, with new_on_default_branch, only an
// issue the scan itself first reported on the project's default branch.
func Matches(r storetickets.Rule, i store.Issue, scanID, defaultBranch string) bool {
	if r.ProjectID != 0 && r.ProjectID != i.ProjectID {
		return false
	}
	m := r.Matcher
	s := triagerule.Subject{ProjectID: i.ProjectID, Tool: i.Tool, RuleID: i.RuleID, CWE: i.CWE, Path: i.FilePath, Urgency: i.Urgency}
	if !m.Match(s) {
		return false
	}
	return !m.NewOnDefaultBranch || (defaultBranch != "" && i.Branch == defaultBranch && i.ScanID == scanID)
}

// GroupKey is the group an issue's ticket is for under a grouping.
func GroupKey(grouping string, i store.Issue) string {
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
