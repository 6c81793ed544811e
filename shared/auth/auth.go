// Package auth turns a request's credential (SERVICE-TOKEN API key or Bearer
// JWT) into a Principal. The Principal is the only source of company scope.
package auth

import (
	"context"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"net/http"
	"slices"
	"strings"
	"time"

	"github.com/golang-jwt/jwt/v5"

	"github.com/acme/codescan-api/shared/store"
)

// Principal is the authenticated caller.
type Principal struct {
	CompanyID   int64
	UserID      int64
	Email       string
	Permissions []string
	IsAdmin     bool
}

// Has reports whether the caller holds perm; company admins hold every
// permission.
func (p *Principal) Has(perm string) bool {
	return p.IsAdmin || slices.Contains(p.Permissions, perm)
}

type principalKey struct{}

// WithPrincipal returns ctx carrying p.
func WithPrincipal(ctx context.Context, p *Principal) context.Context {
	return context.WithValue(ctx, principalKey{}, p)
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

// Users looks callers up by credential.
type Users interface {
	UserByAPIKey(ctx context.Context, key string) (store.User, error)
	UserBySubject(ctx context.Context, sub string) (store.User, error)
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
}

// New returns an Authenticator. With jwtCfg.Keys nil, bearer tokens are
// rejected.
func New(users Users, jwtCfg JWTConfig) *Authenticator {
	return &Authenticator{
		users: users,
		jwt:   jwtCfg,
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

// Authenticate returns the caller of r, or ErrUnauthenticated. Other errors
// are infrastructure failures.
func (a *Authenticator) Authenticate(r *http.Request) (*Principal, error) {
	ctx := r.Context()
	var (
		u   store.User
		err error
	)
	switch {
	case r.Header.Get(APIKeyHeader) != "":
		key := strings.TrimSpace(r.Header.Get(APIKeyHeader))
		if !strings.HasPrefix(key, APIKeyPrefix) {
			return nil, ErrUnauthenticated
		}
		u, err = a.users.UserByAPIKey(ctx, key)
	case r.Header.Get("Authorization") != "":
		scheme, token, ok := strings.Cut(r.Header.Get("Authorization"), " ")
		if !ok || !strings.EqualFold(scheme, "Bearer") || a.jwt.Keys == nil {
			return nil, ErrUnauthenticated
		}
		var sub string
		sub, err = a.subject(strings.TrimSpace(token))
		if err != nil {
			return nil, ErrUnauthenticated
		}
		u, err = a.users.UserBySubject(ctx, sub)
	default:
		return nil, ErrUnauthenticated
	}
	return principal(u, err)
}

// AuthenticateKey authenticates an API key given outside the headers (the
// IDE's legacy verify route carries it as a path segment).
func (a *Authenticator) AuthenticateKey(ctx context.Context, key string) (*Principal, error) {
	key = strings.TrimSpace(key)
	if !strings.HasPrefix(key, APIKeyPrefix) {
		return nil, ErrUnauthenticated
	}
	return principal(a.users.UserByAPIKey(ctx, key))
}

// principal is the caller found by a credential look-up.
func principal(u store.User, err error) (*Principal, error) {
	if errors.Is(err, store.ErrNotFound) {
		return nil, ErrUnauthenticated
	}
	if err != nil {
		return nil, err
	}
	if !u.Active {
		return nil, ErrUnauthenticated
	}
	return &Principal{CompanyID: u.CompanyID, UserID: u.ID, Email: u.Email, Permissions: u.Permissions, IsAdmin: u.IsAdmin}, nil
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
