// Package demo seeds the local dev server's demo data: two companies (to
// show isolation), users with different rights, and every area's records,
// and describes them in the document written to .local/demo.json.
package demo

import (
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"sort"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Document is what .local/demo.json holds.
type Document struct {
	BaseURL               string     `json:"base_url"`
	NotificationTypeCodes []string   `json:"notification_type_codes"`
	Companies             []*Company `json:"companies"`
	// MailInboxURL is the local mail catcher's web inbox (make run).
	MailInboxURL string `json:"mail_inbox_url,omitempty"`
}

// Company is one demo tenant. Resources holds, per area, the ids a client
// needs to try each endpoint (filled by the area's seeder).
type Company struct {
	ID        int64          `json:"id"`
	Name      string         `json:"name"`
	Users     []*User        `json:"users"`
	Resources map[string]any `json:"resources"`
	index     int            // 0 for the first company, 1 for the second
}

// FirstResource is the first id of the company's resource list name
// ("" when it has none), whether seeded now or read back from the marker.
func (c *Company) FirstResource(name string) string {
	switch ids := c.Resources[name].(type) {
	case []string:
		if len(ids) > 0 {
			return ids[0]
		}
	case []any:
		if len(ids) > 0 {
			return fmt.Sprint(ids[0])
		}
	}
	return ""
}

// Index tells seeders which company this is, so the two can differ.
func (c *Company) Index() int { return c.index }

// UserByRole returns the company's demo user with that role
// ("admin", "member", ...).
func (c *Company) UserByRole(role string) *User {
	for _, u := range c.Users {
		if u.Role == role {
			return u
		}
	}
	return nil
}

// User is a demo user with its credentials.
type User struct {
	ID          int64    `json:"id"`
	Role        string   `json:"role"`
	Email       string   `json:"email"`
	APIKey      string   `json:"api_key"`
	BearerToken string   `json:"bearer_token"`
	Subject     string   `json:"subject"`
	Permissions []string `json:"permissions"`
	IsAdmin     bool     `json:"is_admin"`
	Active      bool     `json:"active"`
}

// Seeder adds one area's demo records to a company.
type Seeder func(ctx context.Context, st *store.Store, c *Company) error

// seeders run for each company, after its users exist, in ascending order.
var seeders []orderedSeeder

type orderedSeeder struct {
	order int
	seed  Seeder
}

// register adds an area's seeder; areas that build on others' records use a
// higher order (projects and findings 10, administration 20, uploads 30).
func register(order int, s Seeder) {
	seeders = append(seeders, orderedSeeder{order, s})
	sort.SliceStable(seeders, func(i, j int) bool { return seeders[i].order < seeders[j].order })
}

var roles = []struct {
	role        string
	permissions []string
	admin       bool
	inactive    bool
}{
	{role: "admin", admin: true},
	{role: "member"},
	{role: "integrations-viewer", permissions: []string{routes.PermViewIntegration}},
	{role: "integrations-manager", permissions: []string{routes.PermManageIntegration, routes.PermViewIntegration}},
	{role: "content-access-manager", permissions: []string{routes.PermChangeContentAccess}},
	{role: "policy-manager", permissions: []string{routes.PermManagePolicy}},
	{role: "ci-uploader", permissions: []string{routes.PermUploadScan}},
	{role: "inactive", permissions: []string{routes.PermViewIntegration}, inactive: true},
}

var companies = []struct{ name, domain string }{
	{"Acme Security", "acme.example"},
	{"Globex Corp", "globex.example"},
}

const markerSK = "DEMO"

// Seed writes the demo data once: a marker item records that it is there
// (with the document minus secrets), so a second run only rebuilds the
// document. API keys are derived from secret (kept in .local), so the same
// keys are valid across runs without ever storing them.
func Seed(ctx context.Context, st *store.Store, secret []byte) (*Document, error) {
	doc := &Document{}
	raw, err := st.GetMarker(ctx, markerSK)
	switch {
	case err == nil:
		if err := json.Unmarshal([]byte(raw), doc); err != nil {
			return nil, fmt.Errorf("demo marker: %w", err)
		}
	case errors.Is(err, ddb.ErrNotFound):
		if err := seedAll(ctx, st, secret, doc); err != nil {
			return nil, err
		}
		b, err := json.Marshal(doc)
		if err != nil {
			return nil, err
		}
		if err := st.PutMarker(ctx, markerSK, string(b)); err != nil {
			return nil, err
		}
	default:
		return nil, err
	}
	for _, c := range doc.Companies {
		for _, u := range c.Users {
			u.APIKey = apiKey(secret, u.Email)
		}
	}
	return doc, nil
}

func seedAll(ctx context.Context, st *store.Store, secret []byte, doc *Document) error {
	for i, spec := range companies {
		id, err := st.Ledger.NextID(ctx, "company")
		if err != nil {
			return err
		}
		if err := bulkload.PutCompany(ctx, st, schema.Company{ID: id, Name: spec.name}); err != nil {
			return err
		}
		c := &Company{ID: id, Name: spec.name, Resources: map[string]any{}, index: i}
		for _, r := range roles {
			uid, err := st.Ledger.NextID(ctx, "user")
			if err != nil {
				return err
			}
			u := schema.User{
				ID: uid, CompanyID: id, Email: r.role + "@" + spec.domain,
				FirstName: r.role, LastName: spec.name, Permissions: r.permissions,
				IsAdmin: r.admin, Active: !r.inactive, Subject: fmt.Sprintf("demo|%d", uid),
			}
			if err := bulkload.PutUser(ctx, st, u); err != nil {
				return err
			}
			if err := bulkload.PutAPIKey(ctx, st, id, uid, apiKey(secret, u.Email)); err != nil {
				return err
			}
			c.Users = append(c.Users, &User{ID: uid, Role: r.role, Email: u.Email, Subject: u.Subject,
				Permissions: append([]string{}, r.permissions...), IsAdmin: r.admin, Active: u.Active})
		}
		for _, s := range seeders {
			if err := s.seed(ctx, st, c); err != nil {
				return err
			}
		}
		doc.Companies = append(doc.Companies, c)
	}
	return nil
}

// apiKey derives a demo user's API key from the local secret.
func apiKey(secret []byte, email string) string {
	m := hmac.New(sha256.New, secret)
	m.Write([]byte(email))
	return auth.APIKeyPrefix + base64.RawURLEncoding.EncodeToString(m.Sum(nil))
}
