package demo

import (
	"context"

	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/triage"
	"github.com/acme/codescan-api/shared/triagemodel"
)

func init() { register(41, seedTriageRules) }

// seedTriageRules adds a triage rule awaiting approval (so it changes no
// seeded finding): the policy manager wrote it, an admin may approve it.
func seedTriageRules(ctx context.Context, st *store.Store, c *Company) error {
	author := c.UserByRole("policy-manager")
	if author == nil {
		return nil
	}
	r, err := st.Triage.CreateTriageRule(ctx, triage.Rule{CompanyID: c.ID, CreatedBy: author.ID, Enabled: true, RequiresApproval: true,
		Matcher: triagemodel.Matcher{CWE: 798, Path: "test/**"},
		Action:  triagemodel.Action{Status: "false_positive", Reason: "test fixtures hold no real secrets"}})
	if err != nil {
		return err
	}
	c.Resources["triage_rule_ids"] = []string{r.ID}
	return nil
}
