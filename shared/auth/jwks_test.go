package auth_test

import (
	"crypto/rand"
	"crypto/rsa"
	"errors"
	"net/http"
	"net/http/httptest"
	"sync/atomic"
	"testing"
	"time"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/devjwt"
	"github.com/acme/codescan-api/shared/httpapi"
)

// jwksServer serves set (or fails, or stalls, as told) and counts requests.
type jwksServer struct {
	*httptest.Server
	hits  atomic.Int32
	mode  atomic.Value // "ok", "down", "slow"
	set   atomic.Value // []byte
	stall chan struct{}
}

func newJWKSServer(t *testing.T, set []byte) *jwksServer {
	s := &jwksServer{stall: make(chan struct{})}
	s.mode.Store("ok")
	s.set.Store(set)
	s.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.hits.Add(1)
		switch s.mode.Load() {
		case "down":
			http.Error(w, "unavailable", http.StatusServiceUnavailable)
		case "slow":
			select {
			case <-s.stall:
			case <-r.Context().Done():
			}
		default:
			w.Header().Set("Content-Type", "application/json")
			_, _ = w.Write(s.set.Load().([]byte))
		}
	}))
	t.Cleanup(func() { close(s.stall); s.Close() })
	return s
}

// withJWKS returns env's authenticator and a handler trusting the remote
// key set at url, as config.Load builds them.
func withJWKS(env *testenv.Env, url string) (*auth.Authenticator, http.Handler) {
	return withKeys(env, auth.NewJWKS(url))
}

// withKeys is withJWKS with the key set given.
func withKeys(env *testenv.Env, keys *auth.JWKS) (*auth.Authenticator, http.Handler) {
	a := auth.New(env.Store.Tenancy, auth.JWTConfig{Issuer: testenv.Issuer, Audience: testenv.Audience, Keys: keys.Keyfunc})
	srv := &httpapi.Server{Auth: a, Log: env.Deps.Server.Log}
	return a, accounts.New(config.Deps{Server: srv, Store: env.Store})
}

func TestJWKSIsFetchedOnFirstBearerTokenOnly(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	set, _ := devjwt.JWKS(env.RSA, env.EC)
	js := newJWKSServer(t, set)
	_, h := withJWKS(env, js.URL)
	if js.hits.Load() != 0 {
		t.Fatal("the JWKS was fetched before any bearer token")
	}
	testenv.Do(t, h, "GET", "/api-keys", "", testenv.Key(acme.Admin)...)
	if js.hits.Load() != 0 {
		t.Fatal("an API key fetched the JWKS")
	}
	for range 3 {
		if res := testenv.Do(t, h, "GET", "/api-keys", "", testenv.Bearer(env.Token(t, acme.Admin))...); res.Status != http.StatusOK {
			t.Fatalf("bearer: %d %s", res.Status, res.Body)
		}
	}
	if n := js.hits.Load(); n != 1 {
		t.Fatalf("%d fetches for three tokens, want 1 (cached)", n)
	}
}

func TestJWKSDownGives503ForBearerTokensOnly(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	js := newJWKSServer(t, nil)
	js.mode.Store("down")
	_, h := withJWKS(env, js.URL)
	res := testenv.Do(t, h, "GET", "/api-keys", "", testenv.Bearer(env.Token(t, acme.Admin))...)
	if res.Status != http.StatusServiceUnavailable {
		t.Fatalf("bearer with the JWKS down: %d %s", res.Status, res.Body)
	}
	// Answered at once afterwards (no fetch per request while it is down).
	testenv.Do(t, h, "GET", "/api-keys", "", testenv.Bearer(env.Token(t, acme.Admin))...)
	if n := js.hits.Load(); n != 1 {
		t.Fatalf("%d fetches, want 1 within the retry interval", n)
	}
	if res := testenv.Do(t, h, "GET", "/api-keys", "", testenv.Key(acme.Admin)...); res.Status != http.StatusOK {
		t.Fatalf("API key with the JWKS down: %d", res.Status)
	}
	// A token that is not even a JWT never needs the keys: 401.
	if res := testenv.Do(t, h, "GET", "/api-keys", "", testenv.Bearer("not.a.jwt")...); res.Status != http.StatusUnauthorized {
		t.Fatalf("garbage token: %d", res.Status)
	}
}

func TestJWKSFetchIsBounded(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	js := newJWKSServer(t, nil)
	js.mode.Store("slow")
	a, _ := withJWKS(env, js.URL)
	r := httptest.NewRequest("GET", "/", nil)
	r.Header.Set("Authorization", "Bearer "+env.Token(t, acme.Admin))
	start := time.Now()
	_, err := a.Authenticate(r)
	took := time.Since(start)
	if !errors.Is(err, auth.ErrKeysUnavailable) {
		t.Fatalf("stalled JWKS: %v, want ErrKeysUnavailable", err)
	}
	if took > auth.FetchTimeout+time.Second {
		t.Fatalf("waited %v for a stalled JWKS, bound is %v", took, auth.FetchTimeout)
	}
}

func TestJWKSRefetchesForARotatedKey(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	old, _ := devjwt.JWKS(env.EC)
	js := newJWKSServer(t, old)
	keys := auth.NewJWKS(js.URL)
	at := time.Now()
	keys.Now = func() time.Time { return at }
	a, _ := withKeys(env, keys)
	bearer := func(tok string) error {
		r := httptest.NewRequest("GET", "/", nil)
		r.Header.Set("Authorization", "Bearer "+tok)
		_, err := a.Authenticate(r)
		return err
	}
	ec, _ := env.EC.Mint(devjwt.Claims{Subject: acme.Admin.Subject, Issuer: testenv.Issuer, Audience: testenv.Audience, TTL: time.Hour})
	if err := bearer(ec); err != nil {
		t.Fatal(err)
	}
	// The issuer rotates in a new key; its tokens verify after one refetch.
	k, _ := rsa.GenerateKey(rand.Reader, 2048)
	rotated, _ := devjwt.NewSigner(k, "rotated")
	set, _ := devjwt.JWKS(env.EC, rotated)
	js.set.Store(set)
	tok, _ := rotated.Mint(devjwt.Claims{Subject: acme.Admin.Subject, Issuer: testenv.Issuer, Audience: testenv.Audience, TTL: time.Hour})
	// Within the first fetch's retry interval the unknown key is refused
	// without a fetch.
	at = at.Add(auth.RetryAfter - time.Millisecond)
	if err := bearer(tok); err == nil || js.hits.Load() != 1 {
		t.Fatalf("rotated key within the retry interval: %v after %d fetches, want a refusal after 1", err, js.hits.Load())
	}
	at = at.Add(time.Millisecond)
	if err := bearer(tok); err != nil {
		t.Fatalf("rotated key: %v", err)
	}
	if n := js.hits.Load(); n != 2 {
		t.Fatalf("%d fetches, want 2", n)
	}
}
