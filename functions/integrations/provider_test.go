package integrations_test

import (
	"context"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/acme/codescan-api/internal/gitlabhost"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/store/page"
	"github.com/acme/codescan-api/shared/store/schema"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

const glToken = "glpat-AcmeCiBot00000000000"

type providerBody struct {
	Status      string `json:"status"`
	Integration struct {
		Type          string `json:"type"`
		Provider      string `json:"provider"`
		GatewayPrefix string `json:"gateway_prefix"`
		AccountName   string `json:"account_name"`
	} `json:"integration"`
	Verified *bool `json:"credentials_verified"`
}

// An integration moved to GitLab: the provider, base URL, relative root
// and token change together, verified with GitLab's GET /api/v4/user
// (the account's numeric id must be the integration's); GET shows the
// provider (type stays scm-provider) and the change is audited. A
// provider that is none, or that the host does not speak, changes
// nothing; another company's integration is a missing one.
func TestPatchProvider(t *testing.T) {
	t.Parallel()
	w := setup(t)
	gl := gitlabhost.New(t, gitlabhost.WithToken(glToken, "acme-ci-gl"), gitlabhost.WithRelativeRoot("/gitlab"))
	in := w.integration(t, w.acme.ID, schema.Integration{Name: "Acme code host", AccountID: fmt.Sprint(gl.Account(glToken).ID),
		AccountName: "acme-ci", BaseURL: w.host.URL, GatewayPrefix: "/api/v3"}, oldToken)
	var got providerBody
	w.do(t, w.h, "GET", "/integrations/scm-provider/"+in.UUID, "", testenv.Key(w.viewer)...).Decode(t, &got)
	if got.Integration.Provider != "github" || got.Integration.Type != "scm-provider" {
		t.Fatalf("an integration stored without a provider shows %+v", got.Integration)
	}

	before := w.stored(t, in)
	for body, want := range map[string]string{
		`{"provider":"bitbucket"}`: `provider must be \"github\" or \"gitlab\"`,
		`{"provider":null}`:        `provider must be a string`,
		`{"provider":"gitlab"}`:    `Credential verification failed`, // GitHub's host has no /api/v4/user
	} {
		r := w.patch(t, w.manager, in.UUID, body)
		if r.Status/100 != 4 || !strings.Contains(string(r.Body), want) {
			t.Fatalf("%s: %d %s", body, r.Status, r.Body)
		}
	}
	if after := w.stored(t, in); after.Revision != before.Revision || after.Provider != "" {
		t.Fatalf("a refused change was stored: %+v", after)
	}
	if r := w.patch(t, w.manager, w.otherInt.UUID, `{"provider":"gitlab"}`); r.Status != http.StatusNotFound {
		t.Fatalf("another company's integration: %d %s", r.Status, r.Body)
	}

	r := w.patch(t, w.manager, in.UUID, fmt.Sprintf(`{"provider":"gitlab","base_url":%q,"gateway_prefix":"/gitlab","secure_token":%q}`, gl.HostURL(), glToken))
	r.Decode(t, &got)
	if r.Status != 200 || !*got.Verified || got.Integration.Provider != "gitlab" || got.Integration.GatewayPrefix != "/gitlab" || got.Integration.AccountName != "acme-ci-gl" {
		t.Fatalf("move to GitLab: %d %s", r.Status, r.Body)
	}
	if req := gl.RequestsFor("getApiV4User"); len(req) != 1 || req[0].Path != "/gitlab/api/v4/user" {
		t.Fatalf("verification requests: %+v", req)
	}
	if s := w.stored(t, in); s.Provider != "gitlab" || w.storedToken(t, in) != glToken {
		t.Fatalf("stored: %+v", s)
	}
	w.do(t, w.h, "GET", "/integrations/scm-provider/"+in.UUID, "", testenv.Key(w.viewer)...).Decode(t, &got)
	if got.Integration.Provider != "gitlab" {
		t.Fatalf("GET after the move: %+v", got.Integration)
	}
	entriesPage, err := w.env.Store.Tenancy.ListAudit(context.Background(), w.acme.ID, tenancy.AuditFilter{Action: "integration.update"}, page.Request{Limit: 10})
	entries := entriesPage.Items
	if err != nil || len(entries) != 1 || entries[0].Changes["provider"].Before != "github" || entries[0].Changes["provider"].After != "gitlab" {
		t.Fatalf("audit: %+v %v", entries, err)
	}
	w.noSecrets(t, w.stored(t, in))
}
