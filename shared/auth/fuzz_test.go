package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/MicahParks/keyfunc/v3"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/devjwt"
	"github.com/acme/codescan-api/shared/store/bulkload"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/schema"
)

// fuzzUser is a user of FuzzAuthenticate's table. Keys, subjects and the
// signing key are fixed, so seeds minted by the fuzzing coordinator hold in
// its workers (each has a table of its own).
type fuzzUser struct {
	id, company int64
	active      bool
	key         string
}

func (u fuzzUser) subject() string { return "fuzz|" + string(rune('a'+u.id%26)) }

// FuzzAuthenticate sends any SERVICE-TOKEN and Authorization header values
// to Authenticate (and the first as the path token of AuthenticateKey),
// with a local key set only: nothing is fetched. The answer is
// ErrUnauthenticated, or the principal of exactly the credential given:
// the API key (spaces trimmed) of an active user of an active company, or
// a bearer token (any case of "Bearer") minted here for such a user,
// signature intact. Such credentials are always accepted; an API key
// header wins over Authorization.
func FuzzAuthenticate(f *testing.F) {
	st := testenv.NewStore(f)
	ctx := context.Background()
	users := []fuzzUser{
		{11, 1, true, auth.APIKeyPrefix + strings.Repeat("A", 42) + "1"},
		{12, 1, false, auth.APIKeyPrefix + strings.Repeat("B", 42) + "2"}, // inactive user
		{21, 2, true, auth.APIKeyPrefix + strings.Repeat("C", 42) + "3"},  // of a deactivated company
	}
	for _, c := range []schema.Company{{ID: 1, Name: "Acme"}, {ID: 2, Name: "Gone", DeactivatedAt: "2024-01-01T00:00:00Z"}} {
		if err := bulkload.PutCompany(ctx, st, c); err != nil {
			f.Fatal(err)
		}
	}
	for _, u := range users {
		su := schema.User{ID: u.id, CompanyID: u.company, Email: u.subject() + "@example.test", Active: u.active, Subject: u.subject()}
		if err := bulkload.PutUser(ctx, st, su); err != nil {
			f.Fatal(err)
		}
		if err := bulkload.PutAPIKey(ctx, st, u.company, u.id, u.key); err != nil {
			f.Fatal(err)
		}
	}
	scalar := sha256.Sum256([]byte("codescan-api FuzzAuthenticate signing key"))
	key, err := ecdsa.ParseRawPrivateKey(elliptic.P256(), scalar[:])
	if err != nil {
		f.Fatal(err)
	}
	signer, err := devjwt.NewSigner(key, "fuzz-ec")
	if err != nil {
		f.Fatal(err)
	}
	set, err := devjwt.JWKS(signer)
	if err != nil {
		f.Fatal(err)
	}
	keys, err := keyfunc.NewJWKSetJSON(set)
	if err != nil {
		f.Fatal(err)
	}
	a := auth.New(st.Tenancy, auth.JWTConfig{Issuer: testenv.Issuer, Audience: testenv.Audience, Keys: keys.Keyfunc})
	a.Log = slog.New(slog.NewTextHandler(io.Discard, nil))

	// Tokens minted here, by their signed content: a valid one names the
	// user it may authenticate.
	valid := map[string]fuzzUser{}
	var exact []string
	mint := func(c devjwt.Claims) string {
		tok, err := signer.Mint(c)
		if err != nil {
			f.Fatal(err)
		}
		return tok
	}
	for _, u := range users {
		good := devjwt.Claims{Subject: u.subject(), Issuer: testenv.Issuer, Audience: testenv.Audience, TTL: 24 * time.Hour}
		tok := mint(good)
		if u.active && u.company == 1 {
			valid[signedContent(tok)] = u
			exact = append(exact, tok)
		}
		f.Add("", "Bearer "+tok)
		f.Add("", "bearer  "+tok+" \t")
		f.Add(u.key, "")
		f.Add("  "+u.key+"\t", "Bearer "+tok)
		f.Add(u.key[:len(u.key)-1], "")
		f.Add(strings.TrimPrefix(u.key, auth.APIKeyPrefix), "")
		f.Add("", "Bearer "+u.key)
		f.Add(" ", "Bearer "+tok)
		for _, c := range []devjwt.Claims{
			{Subject: good.Subject, Issuer: good.Issuer, Audience: good.Audience},                  // no exp
			{Subject: good.Subject, Issuer: good.Issuer, Audience: good.Audience, TTL: -time.Hour}, // expired
			{Subject: good.Subject, Issuer: "https://evil.test/", Audience: good.Audience, TTL: time.Hour},
			{Subject: good.Subject, Issuer: good.Issuer, Audience: "other-api", TTL: time.Hour},
			{Subject: "", Issuer: good.Issuer, Audience: good.Audience, TTL: time.Hour},
			{Subject: "fuzz|unknown", Issuer: good.Issuer, Audience: good.Audience, TTL: time.Hour},
		} {
			f.Add("", "Bearer "+mint(c))
		}
	}
	f.Add("", "Basic dXNlcjpwYXNz")
	f.Add("", "Bearer")
	f.Add("", "Bearer not.a.jwt")
	f.Add("", "Bearer eyJhbGciOiJub25lIiwidHlwIjoiSldUIn0.eyJzdWIiOiJmdXp6fGwifQ.")
	f.Add(auth.APIKeyPrefix, "")

	f.Fuzz(func(t *testing.T, serviceToken, authorization string) {
		r := httptest.NewRequest("GET", "/api/v1/verify", nil)
		if serviceToken != "" {
			r.Header.Set(auth.APIKeyHeader, serviceToken)
		}
		if authorization != "" {
			r.Header.Set("Authorization", authorization)
		}
		// What the headers entitle the caller to, by the rule.
		var want *fuzzUser
		via := ledger.ViaAPIKey
		keyOwner := func(key string) *fuzzUser {
			for _, u := range users {
				if u.key == strings.TrimSpace(key) && u.active && u.company == 1 {
					return &u
				}
			}
			return nil
		}
		if serviceToken != "" {
			want = keyOwner(serviceToken)
		} else if scheme, tok, ok := strings.Cut(authorization, " "); ok && strings.EqualFold(scheme, "Bearer") {
			via = ledger.ViaBearer
			for _, e := range exact {
				if strings.TrimSpace(tok) == e {
					u := valid[signedContent(e)]
					want = &u
				}
			}
		}
		p, err := a.Authenticate(r)
		check := func(what string, p *auth.Principal, err error, want *fuzzUser, via string) {
			if err != nil {
				if !errors.Is(err, auth.ErrUnauthenticated) {
					t.Fatalf("%s: error %v", what, err)
				}
				if want != nil {
					t.Fatalf("%s: user %d's credential refused", what, want.id)
				}
				return
			}
			if p.Via != via {
				t.Fatalf("%s: authenticated via %s, want %s", what, p.Via, via)
			}
			if via == ledger.ViaBearer && want == nil {
				// Only a token minted here can authenticate: its signed content is one of ours.
				_, tok, _ := strings.Cut(authorization, " ")
				u, ok := valid[signedContent(strings.TrimSpace(tok))]
				if !ok {
					t.Fatalf("%s: token %q not minted here authenticated user %d", what, tok, p.UserID)
				}
				want = &u
			}
			if want == nil || p.UserID != want.id || p.CompanyID != want.company {
				t.Fatalf("%s: principal %+v, want %+v", what, p, want)
			}
		}
		check("Authenticate", p, err, want, via)
		p, err = a.AuthenticateKey(context.Background(), serviceToken)
		check("AuthenticateKey", p, err, keyOwner(serviceToken), ledger.ViaAPIKey)
	})
}

// signedContent is a token's decoded header and claims, times reduced to
// their presence ("" when it is not three base64url segments of a JSON header and
// claims): equal for tokens that differ only in how the same bytes are
// written, and for the coordinator's and the workers' tokens of one user,
// which are minted at different instants (iat, exp).
func signedContent(tok string) string {
	parts := strings.Split(tok, ".")
	if len(parts) != 3 {
		return ""
	}
	header, err := base64.RawURLEncoding.DecodeString(parts[0])
	if err != nil {
		return ""
	}
	payload, err := base64.RawURLEncoding.DecodeString(parts[1])
	if err != nil {
		return ""
	}
	var claims map[string]any
	if json.Unmarshal(payload, &claims) != nil {
		return ""
	}
	for _, t := range []string{"iat", "exp"} {
		if _, ok := claims[t]; ok {
			claims[t] = "present" // a token without exp is another token
		}
	}
	timeless, err := json.Marshal(claims)
	if err != nil {
		return ""
	}
	return string(header) + "." + string(timeless)
}
