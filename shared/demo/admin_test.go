package demo_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/catalog"
)

// checkAdmin checks the seed's admin resources: active teams, policies
// active and not, integrations whose tokens are sealed and never shown.
func checkAdmin(t *testing.T, st *store.Store, doc *demo.Document) {
	ctx := context.Background()
	sealer, err := secrets.FromEnv(ctx)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := json.Marshal(doc)
	for _, c := range doc.Companies {
		teams, _ := c.Resources["team_ids"].([]int64)
		policies, _ := c.Resources["policy_ids"].([]int64)
		uuids, _ := c.Resources["integration_uuids"].([]string)
		if len(teams) < 3 || len(policies) < 4 || len(uuids) < 2 {
			t.Fatalf("%s: resources %v", c.Name, c.Resources)
		}
		for _, id := range teams {
			tm, err := st.Catalog.GetTeam(ctx, c.ID, id)
			if err != nil || tm.Name == "" || !tm.Active {
				t.Fatalf("team %d: %+v %v", id, tm, err)
			}
		}
		active := map[bool]int{}
		for _, id := range policies {
			p, err := st.Catalog.GetPolicy(ctx, c.ID, id)
			if err != nil {
				t.Fatalf("policy %d: %v", id, err)
			}
			active[p.Active]++
		}
		// The first listed policy is active, so deactivating it shows a change.
		if first, _ := st.Catalog.GetPolicy(ctx, c.ID, policies[0]); !first.Active || active[true] < 2 || active[false] < 2 {
			t.Fatalf("%s: policies active/inactive %v", c.Name, active)
		}
		for _, id := range uuids {
			in, err := st.Catalog.GetIntegration(ctx, c.ID, id)
			if err != nil {
				t.Fatalf("integration %s: %v", id, err)
			}
			tok, err := sealer.Open(ctx, in.SealedToken, catalog.IntegrationTokenRecord(c.ID, id))
			if err != nil || !strings.HasPrefix(tok, "ghp_") || strings.Contains(in.SealedToken, tok) || strings.Contains(string(raw), tok) {
				t.Fatalf("integration %s token: %v", id, err)
			}
		}
	}
}
