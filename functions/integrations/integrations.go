// Package integrations lists, reads and updates source-code-host
// integrations, and receives their hosts' webhook deliveries. An update
// that changes the token, base URL or gateway prefix is applied only after
// the host confirms that the token belongs to the integration's account;
// the token and the webhook secret are stored sealed and never leave the
// service. A delivery is verified with the webhook secret before anything
// of it is read (events.go), and its triage commands are carried out by
// shared/prtriage.
package integrations

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"os"
	"strconv"
	"time"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/prtriage"
	"github.com/acme/codescan-api/shared/routes"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/ddb"
	storepage "github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Type is the constant `type` of every integration in this interface.
const Type = "scm-provider"

// Paging of the list.
const (
	DefaultPageSize = 20
	MaxPageSize     = 50
)

// EnvAllowLoopback ("true" or "1") lets base URLs use plain http and
// loopback addresses: local development and tests only.
const EnvAllowLoopback = scmhost.EnvAllowLoopback

// Options are the group's dependencies beyond config.Deps.
type Options struct {
	Sealer secrets.Sealer  // seals and opens tokens
	Host   *scmhost.Client // verifies credentials
}

// OptionsFromEnv builds Options from the environment: the sealer of
// secrets.FromEnv and a host client that allows loopback only when
// INTEGRATION_ALLOW_LOOPBACK_HTTP says so.
func OptionsFromEnv(ctx context.Context) (Options, error) {
	sealer, err := secrets.FromEnv(ctx)
	if err != nil {
		return Options{}, err
	}
	loopback, _ := strconv.ParseBool(os.Getenv(EnvAllowLoopback))
	return Options{Sealer: sealer, Host: scmhost.New(scmhost.Options{AllowLoopback: loopback})}, nil
}

// New returns the group's http.Handler configured from the environment. A
// configuration error ends the process at start-up (config.Must: exit 1).
func New(d config.Deps) http.Handler {
	return NewWithOptions(d, config.Must(OptionsFromEnv(context.Background())))
}

// NewWithOptions returns the group's http.Handler with explicit options.
func NewWithOptions(d config.Deps, o Options) http.Handler {
	now := d.Clock()
	h := handlers{store: StoreOf(d.Store), sealer: o.Sealer, host: o.Host, now: now, log: d.Server.Log,
		triager: &prtriage.Triager{Store: prtriage.StoreOf(d.Store), Now: now}, secrets: newHookSecrets()}
	return d.Server.Group(routes.GroupIntegrations, map[string]httpapi.HandlerFunc{
		"GET /integrations/scm-provider":                            h.list,
		"GET /integrations/scm-provider/{integration_uuid}":         h.get,
		"PATCH /integrations/scm-provider/{integration_uuid}":       h.update,
		"POST /integrations/scm-provider/{integration_uuid}/events": h.events,
	})
}

type handlers struct {
	store   Store
	sealer  secrets.Sealer
	host    *scmhost.Client
	now     func() time.Time
	log     *slog.Logger
	triager *prtriage.Triager
	secrets *hookSecrets // opened webhook secrets, per process
}

type integrationJSON struct {
	ID   int64  `json:"id"`
	UUID string `json:"uuid"`
	Type string `json:"type"`
	// Provider is the host's kind: github or gitlab (an addition to the
	// spec's fields; type stays scm-provider).
	Provider      string   `json:"provider"`
	Name          string   `json:"name"`
	AccountID     string   `json:"account_id"`
	AccountName   string   `json:"account_name"`
	OrgAllowlist  []string `json:"org_allowlist"`
	BaseURL       string   `json:"base_url"`
	GatewayPrefix string   `json:"gateway_prefix"`
	Expired       bool     `json:"expired"`
	// WebhookSecretSet says whether the host's deliveries can be verified
	// (the secret itself is write-only).
	WebhookSecretSet bool `json:"webhook_secret_set"`
	// InlineComments is the setting of inline review comments.
	InlineComments inlineJSON `json:"inline_comments"`
	CreatedAt      string     `json:"created_at"`
	UpdatedAt      string     `json:"updated_at"`
}

// inlineJSON is the setting of inline review comments as the API shows it:
// max_per_scan is the default when never set.
type inlineJSON struct {
	Enabled    bool `json:"enabled"`
	MaxPerScan int  `json:"max_per_scan"`
}

func inlineView(c *schema.InlineComments) inlineJSON {
	if c == nil || c.MaxPerScan <= 0 {
		return inlineJSON{Enabled: c != nil && c.Enabled, MaxPerScan: schema.DefaultInlinePerScan}
	}
	return inlineJSON{Enabled: c.Enabled, MaxPerScan: c.MaxPerScan}
}

// view is the API form of an integration; the sealed token and webhook
// secret stay behind.
func view(in schema.Integration) integrationJSON {
	return integrationJSON{
		ID: in.ID, UUID: in.UUID, Type: Type, Provider: in.HostProvider(), Name: in.Name, AccountID: in.AccountID,
		AccountName: in.AccountName, OrgAllowlist: httpapi.Array(in.OrgAllowlist),
		BaseURL: in.BaseURL, GatewayPrefix: in.GatewayPrefix, Expired: in.Expired,
		WebhookSecretSet: in.SealedWebhookSecret != "", InlineComments: inlineView(in.InlineComments),
		CreatedAt: in.CreatedAt, UpdatedAt: in.UpdatedAt,
	}
}

func (h handlers) list(w http.ResponseWriter, r *http.Request) error {
	p := auth.FromContext(r.Context())
	pg, err := httpapi.ParsePaging(r, DefaultPageSize, MaxPageSize)
	if err != nil {
		return err
	}
	page, err := h.store.Catalog.ListIntegrations(r.Context(), p.CompanyID, pg.Query())
	if err != nil {
		return err
	}
	return httpapi.WriteList(w, pg, integrationList, storepage.Map(page, view))
}

type oneResponse struct {
	Status      string          `json:"status"`
	Integration integrationJSON `json:"integration"`
	// Verified is set on updates only.
	Verified *bool `json:"credentials_verified,omitempty"`
}

var errNotFound = httpapi.NotFound("Integration not found")

// load reads the integration named by the path, in the caller's company.
func (h handlers) load(r *http.Request) (schema.Integration, error) {
	id, ok := schema.CanonicalUUID(r.PathValue("integration_uuid"))
	if !ok {
		return schema.Integration{}, httpapi.Invalid("integration_uuid must be a UUID")
	}
	in, err := h.store.Catalog.GetIntegration(r.Context(), auth.FromContext(r.Context()).CompanyID, id)
	if errors.Is(err, ddb.ErrNotFound) {
		return schema.Integration{}, errNotFound
	}
	return in, err
}

func (h handlers) get(w http.ResponseWriter, r *http.Request) error {
	in, err := h.load(r)
	if err != nil {
		return err
	}
	return httpapi.WriteJSON(w, http.StatusOK, oneResponse{Status: "ok", Integration: view(in)})
}

// integrationList is how the list answers a page: no page_size.
var integrationList = httpapi.List{Rows: "integrations", Total: "total_integrations", Page: true, TotalPages: true}
