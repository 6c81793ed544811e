// Package tickets is the tickets group (docs/tickets.md): Jira Cloud
// integrations (checked against the site when saved, the API token and
// webhook secret sealed and never returned), ticket rules (a matcher, a
// destination, a grouping and labels), and the trackers' inbound events:
// Jira webhooks and GitHub issues events, each verified by its signature
// before anything of it is read, remembered by delivery id against
// replays, and carried to the findings by shared/tickets.
package tickets

import (
	"context"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/schema"
	storetickets "github.com/acme/codescan-api/shared/store/tickets"
	ticketing "github.com/acme/codescan-api/shared/tickets"
)

// Options are the group's dependencies beyond config.Deps.
type Options struct {
	Sealer        secrets.Sealer
	AllowLoopback bool          // loopback http sites and hosts (tests, local development)
	Timeout       time.Duration // of one call to a site (10s when zero)
}

// OptionsFromEnv is the sealer of secrets.FromEnv and the loopback switch
// the scm-provider integrations use (INTEGRATION_ALLOW_LOOPBACK_HTTP).
func OptionsFromEnv(ctx context.Context) (Options, error) {
	sealer, err := secrets.FromEnv(ctx)
	if err != nil {
		return Options{}, err
	}
	loopback, _ := strconv.ParseBool(os.Getenv(scmhost.EnvAllowLoopback))
	return Options{Sealer: sealer, AllowLoopback: loopback}, nil
}

// New returns the group's handler configured from the environment.
func New(d config.Deps) http.Handler {
	return NewWithOptions(d, config.Must(OptionsFromEnv(context.Background())))
}

// NewWithOptions returns the group's handler with explicit options.
func NewWithOptions(d config.Deps, o Options) http.Handler {
	if o.Timeout == 0 {
		o.Timeout = 10 * time.Second
	}
	now := d.Clock()
	area := storetickets.New(d.Store.Client(), d.Store.TableName(), now)
	jira := ticketing.NewJiraHTTP(o.Timeout, o.AllowLoopback) // guarded (shared/netguard)
	h := handlers{store: StoreOf(d.Store), tickets: area, sealer: o.Sealer, loopback: o.AllowLoopback, now: now, log: d.Server.Log, jira: jira,
		ticketer: &ticketing.Ticketer{Store: ticketing.StoreOf(d.Store), Tickets: area, Sealer: o.Sealer, Now: now, Jira: jira,
			Host: scmhost.New(scmhost.Options{AllowLoopback: o.AllowLoopback, Timeout: o.Timeout})}}
	return d.Server.Group(routes.GroupTickets, map[string]httpapi.HandlerFunc{
		"POST /integrations/jira":                                          h.createJira,
		"GET /integrations/jira":                                           h.listJira,
		"GET /integrations/jira/{integration_uuid}":                        h.getJira,
		"PATCH /integrations/jira/{integration_uuid}":                      h.updateJira,
		"DELETE /integrations/jira/{integration_uuid}":                     h.deleteJira,
		"POST /integrations/jira/{integration_uuid}/events":                h.jiraEvents,
		"POST /integrations/scm-provider/{integration_uuid}/ticket-events": h.githubEvents,
		"POST /ticket-rules":                                               h.createRule,
		"GET /ticket-rules":                                                h.listRules,
		"GET /ticket-rules/{rule_id}":                                      h.getRule,
		"PATCH /ticket-rules/{rule_id}":                                    h.updateRule,
		"DELETE /ticket-rules/{rule_id}":                                   h.deleteRule,
	})
}

// Store is what the handlers read beside the tickets area: the
// integrations and projects a rule or an inbound event names. (The
// ticketer, which they hand the rest, has its own: ticketing.StoreOf.)
// StoreOf composes it from the store's areas.
type Store struct {
	Catalog interface {
		GetIntegration(ctx context.Context, companyID int64, id string) (schema.Integration, error)
		GetProject(ctx context.Context, companyID int64, projectID int64) (schema.Project, error)
		IntegrationByHook(ctx context.Context, id string) (schema.Integration, error)
	}
}

// StoreOf is the areas of st that Store touches: its composition.
func StoreOf(st *store.Store) Store { return Store{Catalog: st.Catalog} }

type handlers struct {
	store    Store
	tickets  *storetickets.Tickets
	sealer   secrets.Sealer
	loopback bool
	jira     *http.Client
	ticketer *ticketing.Ticketer
	now      func() time.Time
	log      *slog.Logger
}
