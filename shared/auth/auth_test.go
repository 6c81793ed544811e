package auth_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"errors"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb/types"
	"github.com/golang-jwt/jwt/v5"

	"github.com/acme/codescan-api/internal/testenv"
	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/devjwt"
	"github.com/acme/codescan-api/shared/store/tenancy"
)

func TestMain(m *testing.M) { testenv.Main(m) }

func authenticate(env *testenv.Env, header ...string) (*auth.Principal, error) {
	r := httptest.NewRequest("GET", "/", nil)
	for i := 0; i+1 < len(header); i += 2 {
		r.Header.Set(header[i], header[i+1])
	}
	return env.Deps.Server.Auth.Authenticate(r)
}

func TestAPIKeys(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	perms := []string{"integrations.view_integration"}
	viewer := env.User(t, acme, testenv.UserSpec{Email: "v@acme.test", Permissions: perms})
	gone := env.User(t, acme, testenv.UserSpec{Email: "gone@acme.test", Inactive: true})

	p, err := authenticate(env, testenv.Key(viewer)...)
	if err != nil {
		t.Fatal(err)
	}
	if p.CompanyID != acme.ID || p.UserID != viewer.ID || p.IsAdmin || !p.Has(perms[0]) || p.Has("integrations.manage_integration") {
		t.Fatalf("principal %+v", p)
	}
	if admin, _ := authenticate(env, testenv.Key(acme.Admin)...); !admin.Has("anything.at_all") {
		t.Fatal("admins hold every permission")
	}

	if !strings.HasPrefix(viewer.APIKey, auth.APIKeyPrefix) || len(viewer.APIKey) < 40 {
		t.Fatalf("key %q is not a prefixed high-entropy key", viewer.APIKey)
	}
	rejected := map[string][]string{
		"no credential":      nil,
		"inactive user":      testenv.Key(gone),
		"unknown key":        {auth.APIKeyHeader, auth.NewAPIKey()},
		"no prefix":          {auth.APIKeyHeader, strings.TrimPrefix(viewer.APIKey, auth.APIKeyPrefix)},
		"truncated key":      {auth.APIKeyHeader, viewer.APIKey[:len(viewer.APIKey)-1]},
		"key as bearer":      testenv.Bearer(viewer.APIKey),
		"basic scheme":       {"Authorization", "Basic dXNlcjpwYXNz"},
		"bearer without tok": {"Authorization", "Bearer"},
	}
	for name, h := range rejected {
		if _, err := authenticate(env, h...); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("%s: err %v, want ErrUnauthenticated", name, err)
		}
	}
}

// TestKeysAreStoredHashedOnly reads every item of the table and checks no
// attribute holds a plaintext key.
func TestKeysAreStoredHashedOnly(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	u := env.User(t, acme, testenv.UserSpec{Email: "u@acme.test"})
	out, err := env.Store.Client().Scan(context.Background(), &dynamodb.ScanInput{TableName: aws.String(env.Store.TableName())})
	if err != nil {
		t.Fatal(err)
	}
	hashSeen := false
	for _, item := range out.Items {
		for name, v := range item {
			s, ok := v.(*types.AttributeValueMemberS)
			if !ok {
				continue
			}
			hashSeen = hashSeen || strings.Contains(s.Value, tenancy.HashAPIKey(u.APIKey))
			for _, key := range []string{u.APIKey, acme.Admin.APIKey} {
				if strings.Contains(s.Value, strings.TrimPrefix(key, auth.APIKeyPrefix)) {
					t.Fatalf("attribute %s holds a plaintext key", name)
				}
			}
		}
	}
	if !hashSeen {
		t.Fatal("the key's SHA-256 is not stored either: the scan read nothing useful")
	}
}

func TestBearerTokens(t *testing.T) {
	env := testenv.New(t)
	acme := env.Company(t, "Acme")
	u := env.User(t, acme, testenv.UserSpec{Email: "u@acme.test"})
	gone := env.User(t, acme, testenv.UserSpec{Email: "gone@acme.test", Inactive: true})

	mint := func(s *devjwt.Signer, c devjwt.Claims) string {
		t.Helper()
		tok, err := s.Mint(c)
		if err != nil {
			t.Fatal(err)
		}
		return tok
	}
	good := devjwt.Claims{Subject: u.Subject, Issuer: testenv.Issuer, Audience: testenv.Audience, TTL: time.Hour}
	for name, tok := range map[string]string{
		"RS256": mint(env.RSA, good),
		"ES256": mint(env.EC, good),
	} {
		p, err := authenticate(env, testenv.Bearer(tok)...)
		if err != nil || p.UserID != u.ID || p.CompanyID != acme.ID {
			t.Fatalf("%s: %v %+v", name, err, p)
		}
	}

	with := func(f func(*devjwt.Claims)) devjwt.Claims { c := good; f(&c); return c }
	strangerRSA, _ := rsa.GenerateKey(rand.Reader, 2048)
	stranger, _ := devjwt.NewSigner(strangerRSA, "test-rsa") // same kid, other key
	strangerEC, _ := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	strangerES, _ := devjwt.NewSigner(strangerEC, "test-ec")

	// alg "none" and an HMAC token keyed with the trusted public key (the
	// classic algorithm-confusion attack) must both fail.
	none := jwt.NewWithClaims(jwt.SigningMethodNone, jwt.MapClaims{"sub": u.Subject, "iss": testenv.Issuer, "aud": testenv.Audience, "exp": time.Now().Add(time.Hour).Unix()})
	noneTok, _ := none.SignedString(jwt.UnsafeAllowNoneSignatureType)
	pub, _ := x509.MarshalPKIXPublicKey(env.RSA.Key.Public())
	hs := jwt.NewWithClaims(jwt.SigningMethodHS256, jwt.MapClaims{"sub": u.Subject, "iss": testenv.Issuer, "aud": testenv.Audience, "exp": time.Now().Add(time.Hour).Unix()})
	hs.Header["kid"] = "test-rsa"
	hsTok, _ := hs.SignedString(pub)

	rejected := map[string]string{
		"alg none":        noneTok,
		"HMAC confusion":  hsTok,
		"no exp":          mint(env.RSA, with(func(c *devjwt.Claims) { c.TTL = 0 })),
		"expired":         mint(env.RSA, with(func(c *devjwt.Claims) { c.TTL = -time.Hour })),
		"wrong issuer":    mint(env.RSA, with(func(c *devjwt.Claims) { c.Issuer = "https://evil.test/" })),
		"wrong audience":  mint(env.RSA, with(func(c *devjwt.Claims) { c.Audience = "other-api" })),
		"unknown subject": mint(env.RSA, with(func(c *devjwt.Claims) { c.Subject = "test|999999" })),
		"empty subject":   mint(env.RSA, with(func(c *devjwt.Claims) { c.Subject = "" })),
		"untrusted RSA":   mint(stranger, good),
		"untrusted EC":    mint(strangerES, good),
		"inactive user":   mint(env.RSA, with(func(c *devjwt.Claims) { c.Subject = gone.Subject })),
		"garbage":         "not.a.jwt",
	}
	for name, tok := range rejected {
		if _, err := authenticate(env, testenv.Bearer(tok)...); !errors.Is(err, auth.ErrUnauthenticated) {
			t.Errorf("%s: err %v, want ErrUnauthenticated", name, err)
		}
	}
}
