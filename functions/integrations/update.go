package integrations

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/acme/codescan-api/shared/cleantext"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/scmhost"
	"github.com/acme/codescan-api/shared/secrets"
	"github.com/acme/codescan-api/shared/store/catalog"
	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/schema"
)

// Limits of the values an update accepts.
const (
	MaxNameLength   = 100  // characters, after trimming
	MaxOrgs         = 100  // org_allowlist entries
	MaxOrgLength    = 100  // characters of one entry, after trimming
	MaxTokenLength  = 1024 // bytes of secure_token
	fieldsAllowedIn = "secure_token, name, org_allowlist, base_url, gateway_prefix, provider, webhook_secret, inline_comments"
	// A webhook secret is 16 to 256 characters (GitHub's own bound on
	// what it accepts is looser; below 16 a secret is guessable).
	MinWebhookSecret = 16
	MaxWebhookSecret = 256
)

// patch is a validated update body; nil members are absent.
type patch struct {
	token, name, baseURL, prefix *string
	provider                     *string
	orgs                         *[]string
	webhookSecret                *string
	inline                       *schema.InlineComments
}

// verifies reports whether the update touches the credentials (the host
// asked, or how it is asked).
func (p patch) verifies() bool {
	return p.token != nil || p.baseURL != nil || p.prefix != nil || p.provider != nil
}

func (h handlers) update(w http.ResponseWriter, r *http.Request) error {
	in, err := h.load(r)
	if err != nil {
		return err
	}
	p, err := h.parsePatch(r)
	if err != nil {
		return err
	}
	ch := catalog.IntegrationChange{Name: p.name, OrgAllowlist: p.orgs, BaseURL: p.baseURL, GatewayPrefix: p.prefix, Provider: p.provider,
		InlineComments: p.inline}
	if p.verifies() {
		if err := h.verify(r, in, p, &ch); err != nil {
			return err
		}
	}
	if p.webhookSecret != nil {
		sealed, err := h.sealer.Seal(r.Context(), *p.webhookSecret, catalog.IntegrationWebhookRecord(in.CompanyID, in.UUID))
		if err != nil {
			return err
		}
		ch.SealedWebhookSecret = &sealed
	}
	verified := ch.Verified
	if ch != (catalog.IntegrationChange{}) {
		in, err = h.store.Catalog.UpdateIntegration(r.Context(), in.CompanyID, in.UUID, in.Revision, ch)
		switch {
		case errors.Is(err, catalog.ErrHookTaken):
			return httpapi.Conflict("This integration's uuid cannot receive webhook deliveries; ask support for a new integration")
		case errors.Is(err, ddb.ErrConflict):
			return httpapi.Conflict("The integration was changed by another request; read it again and retry")
		case errors.Is(err, ddb.ErrNotFound):
			return errNotFound
		case err != nil:
			return err
		}
	}
	return httpapi.WriteJSON(w, http.StatusOK, oneResponse{Status: "ok", Integration: view(in), Verified: &verified})
}

// parsePatch accepts exactly the members the spec lists, each of its type
// (null is not a value of any of them), and validates the values.
func (h handlers) parsePatch(r *http.Request) (patch, error) {
	body, err := httpapi.DecodeJSONObject(r)
	if err != nil {
		return patch{}, err
	}
	var p patch
	for _, name := range slices.Sorted(maps.Keys(body)) {
		raw := body[name]
		switch name {
		case "secure_token":
			p.token, err = str(name, raw, token)
		case "name":
			p.name, err = str(name, raw, displayName)
		case "base_url":
			p.baseURL, err = str(name, raw, h.host.NormalizeBaseURL)
		case "gateway_prefix":
			p.prefix, err = str(name, raw, scmhost.NormalizePrefix)
		case "provider":
			p.provider, err = str(name, raw, provider)
		case "org_allowlist":
			p.orgs, err = orgs(raw)
		case "webhook_secret":
			p.webhookSecret, err = str(name, raw, webhookSecret)
		case "inline_comments":
			p.inline, err = inlineComments(raw)
		default:
			err = httpapi.Invalid("Unknown field %q (allowed: %s)", name, fieldsAllowedIn)
		}
		if err != nil {
			return patch{}, err
		}
	}
	return p, nil
}

// str decodes a JSON string member and normalises it with check.
func str(field string, raw json.RawMessage, check func(string) (string, error)) (*string, error) {
	var s string
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, &s) != nil {
		return nil, httpapi.Invalid("%s must be a string", field)
	}
	v, err := check(s)
	if err != nil {
		return nil, httpapi.Invalid("%s", err.Error())
	}
	return &v, nil
}

// token checks a replacement token without ever echoing it.
func token(s string) (string, error) {
	if s == "" || len(s) > MaxTokenLength || strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return "", fmt.Errorf("secure_token must be 1 to %d printable characters without white space", MaxTokenLength)
	}
	return s, nil
}

// webhookSecret checks a webhook secret without ever echoing it. It is
// kept byte for byte as sent (never normalized): the host signs with the
// very bytes its admin typed.
func webhookSecret(s string) (string, error) {
	n := utf8.RuneCountInString(s)
	if n < MinWebhookSecret || n > MaxWebhookSecret || !utf8.ValidString(s) ||
		strings.IndexFunc(s, func(r rune) bool { return unicode.IsSpace(r) || !unicode.IsPrint(r) }) >= 0 {
		return "", fmt.Errorf("webhook_secret must be %d to %d printable characters without white space", MinWebhookSecret, MaxWebhookSecret)
	}
	return s, nil
}

// provider checks the host's kind: github or gitlab.
func provider(s string) (string, error) {
	if s != scmhost.ProviderGitHub && s != scmhost.ProviderGitLab {
		return "", fmt.Errorf(`provider must be "github" or "gitlab"`)
	}
	return s, nil
}

func displayName(s string) (string, error) {
	s, err := cleantext.Line("name", strings.TrimSpace(s))
	if err != nil {
		return "", err
	}
	if s == "" || utf8.RuneCountInString(s) > MaxNameLength {
		return "", fmt.Errorf("name must hold 1 to %d characters", MaxNameLength)
	}
	return s, nil
}

// orgs decodes org_allowlist: trimmed, non-empty entries, duplicates
// (ignoring case) dropped; an empty array clears the list.
func orgs(raw json.RawMessage) (*[]string, error) {
	var in []*string
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, &in) != nil {
		return nil, httpapi.Invalid("org_allowlist must be an array of strings")
	}
	if len(in) > MaxOrgs {
		return nil, httpapi.Invalid("org_allowlist may hold at most %d entries", MaxOrgs)
	}
	out := []string{}
	for _, s := range in {
		if s == nil {
			return nil, httpapi.Invalid("org_allowlist must be an array of strings")
		}
		v, err := cleantext.Line("org_allowlist entries", strings.TrimSpace(*s))
		if err != nil {
			return nil, err
		}
		if v == "" || utf8.RuneCountInString(v) > MaxOrgLength {
			return nil, httpapi.Invalid("org_allowlist entries must hold 1 to %d characters", MaxOrgLength)
		}
		if !slices.ContainsFunc(out, func(o string) bool { return strings.EqualFold(o, v) }) {
			out = append(out, v)
		}
	}
	return &out, nil
}

// verify asks the host who the (new or stored) token belongs to, at the
// (new or stored) address, and fills ch with what a successful check
// changes. Any failure is returned and nothing is written.
func (h handlers) verify(r *http.Request, in schema.Integration, p patch, ch *catalog.IntegrationChange) error {
	ctx := r.Context()
	tok, err := h.tokenToVerify(ctx, in, p)
	if err != nil {
		return err
	}
	kind, base, prefix := hostAfter(in, p)
	acct, err := h.host.VerifyFor(ctx, kind, base, prefix, tok)
	if err != nil {
		return h.verifyFailed(r, in, p, err)
	}
	// Only the host's numeric user id identifies the account: logins can be
	// renamed and then taken by someone else.
	if strconv.FormatInt(acct.ID, 10) != in.AccountID {
		return verificationFailed(http.StatusUnprocessableEntity, fmt.Sprintf(
			"the token belongs to account %d (%s), not to this integration's account %s", acct.ID, acct.Login, in.AccountID))
	}
	ch.Verified = true
	if acct.Login != "" && acct.Login != in.AccountName {
		ch.AccountName = &acct.Login
	}
	if p.token != nil {
		sealed, err := h.sealer.Seal(ctx, tok, catalog.IntegrationTokenRecord(in.CompanyID, in.UUID))
		if err != nil {
			return err
		}
		ch.SealedToken = &sealed
	}
	return nil
}

// tokenToVerify is the patch's new token, else the stored one opened.
func (h handlers) tokenToVerify(ctx context.Context, in schema.Integration, p patch) (string, error) {
	if p.token != nil {
		return *p.token, nil
	}
	stored, err := h.hostToken(ctx, in)
	if errors.Is(err, secrets.ErrMalformed) {
		return "", verificationFailed(http.StatusUnprocessableEntity, "the stored token cannot be read; send secure_token with the change")
	}
	return stored, err
}

// hostAfter is the host's provider and address as the patch leaves them.
func hostAfter(in schema.Integration, p patch) (kind, base, prefix string) {
	kind, base, prefix = in.HostProvider(), in.BaseURL, in.GatewayPrefix
	if p.provider != nil {
		kind = *p.provider
	}
	if p.baseURL != nil {
		base = *p.baseURL
	}
	if p.prefix != nil {
		prefix = *p.prefix
	}
	return kind, base, prefix
}

// verifyFailed answers a failed verification: the address refused is bad
// input; a stored token the host rejects marks the integration expired
// (its admins told, integration_expired, in one transaction).
func (h handlers) verifyFailed(r *http.Request, in schema.Integration, p patch, err error) error {
	var invalid *scmhost.InvalidError
	var failed *scmhost.Error
	switch {
	case errors.As(err, &invalid):
		return httpapi.Invalid("%s", invalid.Reason)
	case errors.As(err, &failed) && failed.Kind == scmhost.BadCredentials && p.token == nil && !in.Expired:
		if err := h.markExpired(r, in, failed.Error()); err != nil {
			return err
		}
		return verificationFailed(statusOf(failed.Kind), failed.Error())
	case errors.As(err, &failed):
		return verificationFailed(statusOf(failed.Kind), failed.Error())
	}
	return err
}

// statusOf maps a failed verification to the answer's status: the caller's
// address pointing inside is bad input (400), a host that answers but
// does not confirm the credentials is 422, a host that does not answer
// properly is 502.
func statusOf(k scmhost.Kind) int {
	switch k {
	case scmhost.BlockedTarget:
		return http.StatusBadRequest
	case scmhost.Unreachable, scmhost.HostFailure, scmhost.BadResponse:
		return http.StatusBadGateway
	}
	return http.StatusUnprocessableEntity
}

func verificationFailed(status int, why string) error {
	return httpapi.Errorf(status, "Credential verification failed: %s", why)
}

// markExpired records that re-verification with the stored token was
// rejected. The event id carries the revision it expires, so a retried
// request records the same event and a later expiry a new one.
func (h handlers) markExpired(r *http.Request, in schema.Integration, reason string) error {
	data, err := json.Marshal(map[string]string{
		"integration_uuid": in.UUID, "name": in.Name, "account_name": in.AccountName, "base_url": in.BaseURL, "reason": reason,
	})
	if err != nil {
		return err
	}
	ev := schema.Event{
		ID:        fmt.Sprintf("integration_expired-%s-%d", in.UUID, in.Revision),
		CompanyID: in.CompanyID, Type: "integration_expired", CreatedAt: h.now(), Data: data,
	}
	err = h.store.Catalog.MarkIntegrationExpired(r.Context(), in.CompanyID, in.UUID, in.Revision, ev)
	if errors.Is(err, ddb.ErrConflict) {
		return httpapi.Conflict("The integration was changed by another request; read it again and retry")
	}
	return err
}

// inlineComments decodes the setting of inline review comments: an object
// with a boolean enabled and, optionally, max_per_scan 1 to 50 (the
// default 10 when absent); it replaces the whole setting.
func inlineComments(raw json.RawMessage) (*schema.InlineComments, error) {
	var in map[string]json.RawMessage
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) || json.Unmarshal(raw, &in) != nil {
		return nil, httpapi.Invalid("inline_comments must be an object {enabled, max_per_scan}")
	}
	out := schema.InlineComments{MaxPerScan: schema.DefaultInlinePerScan}
	enabled := false
	for _, name := range slices.Sorted(maps.Keys(in)) {
		v := bytes.TrimSpace(in[name])
		switch name {
		case "enabled":
			if !bytes.Equal(v, []byte("true")) && !bytes.Equal(v, []byte("false")) {
				return nil, httpapi.Invalid("inline_comments.enabled must be a boolean")
			}
			out.Enabled, enabled = bytes.Equal(v, []byte("true")), true
		case "max_per_scan":
			n, err := strconv.Atoi(string(v))
			if err != nil || n < 1 || n > schema.MaxInlinePerScan {
				return nil, httpapi.Invalid("inline_comments.max_per_scan must be an integer from 1 to %d", schema.MaxInlinePerScan)
			}
			out.MaxPerScan = n
		default:
			return nil, httpapi.Invalid("Unknown field %q in inline_comments (allowed: enabled, max_per_scan)", name)
		}
	}
	if !enabled {
		return nil, httpapi.Invalid("inline_comments.enabled is required")
	}
	return &out, nil
}
