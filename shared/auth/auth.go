// Package auth turns a request's credential (SERVICE-TOKEN API key or Bearer
// JWT) into a Principal. The Principal is the only source of company scope.
package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/acme/codescan-api/shared/store/ddb"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

// Principal is the authenticated caller.
type Principal struct {
	CompanyID   int64
	UserID      int64
	Email       string
	Permissions []string
	IsAdmin     bool
	// Via is how the caller authenticated (store.ViaAPIKey or
	// store.ViaBearer), KeyID the API key's id.
	Via   string
	KeyID int64
}

// Actor is the caller as the audit log records it.
func (p *Principal) Actor() ledger.AuditActor {
	return ledger.AuditActor{UserID: p.UserID, Via: p.Via, KeyID: p.KeyID}
}

// Has reports whether the caller holds perm; company admins hold every
// permission.
func (p *Principal) Has(perm string) bool {
	return p.IsAdmin || slices.Contains(p.Permissions, perm)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p, and p as the actor of the store's
// audited writes.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return ledger.WithAuditActor(context.WithValue(ctx, principalKey{}, p), p.Actor())
}

// FromContext returns the authenticated caller. Handlers behind the auth
// middleware always have one; it panics otherwise, because serving company
// data without a principal would be a bug.
func FromContext(ctx context.Context) *Principal {
	p, ok := ctx.Value(principalKey{}).(*Principal)
	if !ok {
		panic("auth: no principal in context")
	}
	return p
}

// ErrUnauthenticated covers every missing, malformed, unknown, expired or
// inactive credential: callers cannot tell them apart.
var ErrUnauthenticated = errors.New("missing or invalid credential")

// APIKeyHeader carries API keys.
const APIKeyHeader = "SERVICE-TOKEN"

// APIKeyPrefix makes keys recognisable (for secret scanners and humans).
const APIKeyPrefix = "csk_"

// NewAPIKey returns a new high-entropy API key (256 random bits).
func NewAPIKey() string {
	b := make([]byte, 32)
	if _, err := rand.Read(b); err != nil {
		panic(err) // crypto/rand never fails on supported platforms
	}
	return APIKeyPrefix + base64.RawURLEncoding.EncodeToString(b)
}

// ErrKeysUnavailable means bearer tokens cannot be checked now (the JWKS
// cannot be fetched); API keys are unaffected.
var ErrKeysUnavailable = errors.New("token signing keys unavailable")

// Users looks callers up by credential.
type Users interface {
	CredentialByAPIKey(ctx context.Context, key string, at time.Time) (tenancy.Credential, error)
	CredentialBySubject(ctx context.Context, sub string) (tenancy.Credential, error)
	TouchAPIKey(ctx context.Context, c tenancy.Credential, at time.Time) error
}

// JWTConfig says which bearer tokens are trusted.
type JWTConfig struct {
	Issuer   string
	Audience string
	Keys     jwt.Keyfunc // from a JWKS
}

// Authenticator checks credentials.
type Authenticator struct {
	users  Users
	jwt    JWTConfig
	parser *jwt.Parser
	// Log receives failures of bookkeeping that must not fail a request
	// (recording an API key's last use).
	Log *slog.Logger
	// Now is the clock of API key expiry and last use (time.Now when nil;
	// tests set it).
	Now func() time.Time
}

func (a *Authenticator) now() time.Time {
	if a.Now == nil {
		return time.Now()
	}
	return a.Now()
}

// New returns an Authenticator. With jwtCfg.Keys nil, bearer tokens are
// rejected.
func New(users Users, jwtCfg JWTConfig) *Authenticator {
	return &Authenticator{
		users: users,
		jwt:   jwtCfg,
		Log:   slog.Default(),
		parser: jwt.NewParser(
			// Asymmetric only: "none" and HMAC (which would let a public
			// key be used as a shared secret) never verify.
			jwt.WithValidMethods([]string{"RS256", "ES256"}),
			jwt.WithExpirationRequired(),
			jwt.WithIssuer(jwtCfg.Issuer),
			jwt.WithAudience(jwtCfg.Audience),
			jwt.WithLeeway(30*time.Second),
		),
	}
}

// Authenticate returns the caller of r, or ErrUnauthenticated, or
// ErrKeysUnavailable for a bearer token while the JWKS cannot be fetched.
// Other errors are infrastructure failures. It reads the store twice: the
// credential's look-up item, then the user and company together.
func (a *Authenticator) Authenticate(r *http.Request) (*Principal, error) {
	ctx := r.Context()
	at := a.now()
	var (
		c   tenancy.Credential
		via string
		err error
	)
	switch {
	case r.Header.Get(APIKeyHeader) != "":
		key := strings.TrimSpace(r.Header.Get(APIKeyHeader))
		if !strings.HasPrefix(key, APIKeyPrefix) {
			return nil, ErrUnauthenticated
		}
		via = ledger.ViaAPIKey
		c, err = a.users.CredentialByAPIKey(ctx, key, at)
	case r.Header.Get("Authorization") != "":
		scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || a.jwt.Keys == nil {
			return nil, ErrUnauthenticated
		}
		var sub string
		sub, err = a.subject(strings.TrimSpace(token))
		if errors.Is(err, ErrKeysUnavailable) {
			return nil, ErrKeysUnavailable
		}
		if err != nil {
			return nil, ErrUnauthenticated
		}
		via = ledger.ViaBearer
		c, err = a.users.CredentialBySubject(ctx, sub)
	default:
		return nil, ErrUnauthenticated
	}
	return a.principal(ctx, c, err, via, at)
}

// AuthenticateKey authenticates an API key given outside the headers (the
// IDE's legacy verify route carries it as a path segment).
func (a *Authenticator) AuthenticateKey(ctx context.Context, key string) (*Principal, error) {
	key = strings.TrimSpace(key)
	if !strings.HasPrefix(key, APIKeyPrefix) {
		return nil, ErrUnauthenticated
	}
	at := a.now()
	c, err := a.users.CredentialByAPIKey(ctx, key, at)
	return a.principal(ctx, c, err, ledger.ViaAPIKey, at)
}

// principal is the caller found by a credential look-up.
func (a *Authenticator) principal(ctx context.Context, c tenancy.Credential, err error, via string, at time.Time) (*Principal, error) {
	if errors.Is(err, ddb.ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	u := c.User
	if !u.Active || !c.Company.Active() {
		return nil, ErrUnauthenticated
	}
	if err := a.users.TouchAPIKey(ctx, c, at); err != nil {
		a.Log.Error("record API key use", "key_id", c.KeyID, "error", err.Error())
	}
	return &Principal{CompanyID: u.CompanyID, UserID: u.ID, Email: u.Email, Permissions: u.Permissions,
		IsAdmin: u.IsAdmin, Via: via, KeyID: c.KeyID}, nil
}

func (a *Authenticator) subject(raw string) (string, error) {
	tok, err := a.parser.Parse(raw, a.jwt.Keys)
	if err != nil {
		return "", err
	}
	sub, err := tok.Claims.GetSubject()
	if err != nil || sub == "" {
		return "", ErrUnauthenticated
	}
	return sub, nil
}
