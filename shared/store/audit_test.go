package store_test

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/delivery"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/tabledef"
)

// TestAdministrativeWritesAreAudited checks the write paths of other groups
// append their entry in the same transaction, with before and after, and
// that writes without an actor (seeds) record nothing; entries and items
// are stamped by the store's clock.
func TestAdministrativeWritesAreAudited(t *testing.T) {
	t.Parallel()
	base := testenv.NewStore(t)
	clock := time.Date(2031, 5, 6, 7, 8, 9, 0, time.UTC)
	st := store.New(base.Client(), base.TableName(), store.WithAuditRetention(30*24*time.Hour),
		store.WithClock(func() time.Time { return clock }))
	const cid = 7
	bg := context.Background()
	actor := ledger.AuditActor{UserID: 3, Via: ledger.ViaAPIKey, KeyID: 11}
	ctx := ledger.WithAuditActor(bg, actor)

	if _, err := st.Catalog.CreateTeam(bg, schema.Team{CompanyID: cid, Name: "seeded"}); err != nil {
		t.Fatal(err)
	}
	team, err := st.Catalog.CreateTeam(ctx, schema.Team{CompanyID: cid, Name: "Platform", MemberIDs: []int64{3}})
	if err != nil || team.CreatedAt != "2031-05-06T07:08:09Z" {
		t.Fatal(team.CreatedAt, err)
	}
	pol, err := st.Catalog.CreatePolicy(bg, schema.Policy{CompanyID: cid, Name: "p", Active: true})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := st.Catalog.DeactivatePolicy(ctx, cid, pol.ID); err != nil {
		t.Fatal(err)
	}
	if p, err := st.Catalog.DeactivatePolicy(ctx, cid, pol.ID); err != nil || p.Active { // idempotent, no second entry
		t.Fatalf("%+v %v", p, err)
	}
	in, err := st.Catalog.CreateIntegration(bg, schema.Integration{CompanyID: cid, UUID: catalog.NewIntegrationUUID(), Name: "gh", SealedToken: "sealed-1", Expired: true})
	if err != nil {
		t.Fatal(err)
	}
	name, sealed := "GitHub", "sealed-2"
	updated, err := st.Catalog.UpdateIntegration(ctx, cid, in.UUID, in.Revision, catalog.IntegrationChange{Name: &name, SealedToken: &sealed, Verified: true})
	if err != nil || updated.Name != "GitHub" || updated.Revision != 2 || updated.Expired {
		t.Fatalf("%+v %v", updated, err)
	}
	if _, err := st.Catalog.UpdateIntegration(ctx, cid, in.UUID, in.Revision, catalog.IntegrationChange{Name: &name}); err == nil {
		t.Fatal("a stale revision was accepted")
	}
	on := true
	if err := st.Deliveries.UpdateNotificationSetting(ctx, cid, 0, "scan_completed", []delivery.ChannelChange{{Channel: delivery.ChannelEmail, Value: &on}}); err != nil {
		t.Fatal(err)
	}
	if err := st.Deliveries.UpdateNotificationSetting(ctx, cid, 3, "scan_completed", []delivery.ChannelChange{{Channel: delivery.ChannelEmail, Value: &on}}); err != nil {
		t.Fatal(err) // a user's own preference: recorded too
	}

	entriesPage, err := st.Tenancy.ListAudit(bg, cid, tenancy.AuditFilter{}, page.Request{Limit: 50})

	entries, res := entriesPage.Items, entriesPage
	if err != nil || res.Next != "" {
		t.Fatal(err, res)
	}
	var got []string
	for _, e := range entries {
		if e.Actor != actor || !strings.HasPrefix(e.At, "2031-05-06T07:08:09") {
			t.Errorf("%s by %+v at %s", e.Action, e.Actor, e.At)
		}
		got = append(got, fmt.Sprintf("%s %s/%s %v", e.Action, e.TargetType, e.TargetID, e.Changes))
	}
	want := []string{
		"notification_preference.update notification_type/scan_completed map[email_enabled:{<nil> true}]",
		"notification_default.update notification_type/scan_completed map[email_enabled:{<nil> true}]",
		fmt.Sprintf("integration.update integration/%s map[expired:{true false} name:{gh GitHub} sealed_token:{[changed] [changed]}]", in.UUID),
		fmt.Sprintf("policy.deactivate policy/%d map[active:{true false}]", pol.ID),
		fmt.Sprintf("team.create team/%d map[member_ids:{<nil> [3]} name:{<nil> Platform} project_ids:{<nil> <nil>} project_tags:{<nil> <nil>} repo_url_patterns:{<nil> <nil>}]", team.ID),
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Fatalf("entries:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}

	// Entries expire through the table's TTL after the retention.
	out, err := st.Client().Scan(bg, &dynamodb.ScanInput{TableName: aws.String(st.TableName())})
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, item := range out.Items {
		pk := item[tabledef.PK].(*types.AttributeValueMemberS).Value
		if !strings.Contains(pk, "#AUDIT") {
			continue
		}
		n++
		ttl, ok := item[tabledef.TTLAttribute].(*types.AttributeValueMemberN)
		if !ok {
			t.Fatalf("audit item %s has no %s", pk, tabledef.TTLAttribute)
		}
		var exp int64
		fmt.Sscan(ttl.Value, &exp)
		if want := clock.Add(30 * 24 * time.Hour).Unix(); exp != want {
			t.Fatalf("expires at %d, want %d (30 days after the clock)", exp, want)
		}
	}
	if n != 2*len(want) {
		t.Fatalf("%d audit items, want 2 per entry", n)
	}
}
