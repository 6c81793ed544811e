// Package devjwt signs bearer tokens for local development and tests, and
// publishes the matching JWKS. In AWS tokens come from the real identity
// provider; this package is never linked into a Lambda.
package devjwt

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/golang-jwt/jwt/v5"
)

// Signer holds one private key and its key id.
type Signer struct {
	Key    crypto.Signer
	KID    string
	Method jwt.SigningMethod
}

// NewSigner wraps an RSA (RS256) or ECDSA P-256 (ES256) private key.
func NewSigner(key crypto.Signer, kid string) (*Signer, error) {
	switch key.(type) {
	case *rsa.PrivateKey:
		return &Signer{Key: key, KID: kid, Method: jwt.SigningMethodRS256}, nil
	case *ecdsa.PrivateKey:
		return &Signer{Key: key, KID: kid, Method: jwt.SigningMethodES256}, nil
	}
	return nil, errors.New("devjwt: key must be RSA or ECDSA")
}

// Claims of a minted token.
type Claims struct {
	Subject  string
	Issuer   string
	Audience string
	TTL      time.Duration // 0 mints a token without exp
}

// Mint signs a token.
func (s *Signer) Mint(c Claims) (string, error) {
	claims := jwt.MapClaims{"sub": c.Subject, "iss": c.Issuer, "aud": c.Audience, "iat": time.Now().Unix()}
	if c.TTL != 0 {
		claims["exp"] = time.Now().Add(c.TTL).Unix()
	}
	tok := jwt.NewWithClaims(s.Method, claims)
	tok.Header["kid"] = s.KID
	return tok.SignedString(s.Key)
}

// JWKS returns the JSON Web Key Set with the public keys of signers.
func JWKS(signers ...*Signer) ([]byte, error) {
	var set jwkset.JWKSMarshal
	for _, s := range signers {
		jwk, err := jwkset.NewJWKFromKey(s.Key.Public(), jwkset.JWKOptions{
			Metadata: jwkset.JWKMetadataOptions{KID: s.KID, ALG: jwkset.ALG(s.Method.Alg()), USE: jwkset.UseSig},
		})
		if err != nil {
			return nil, err
		}
		set.Keys = append(set.Keys, jwk.Marshal())
	}
	return json.Marshal(set)
}

// LoadOrCreateRSA reads a PEM private key from path, creating a 2048-bit key
// there on first use (the local dev server's signing key).
func LoadOrCreateRSA(path string) (*Signer, error) {
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		key, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			return nil, err
		}
		der, err := x509.MarshalPKCS8PrivateKey(key)
		if err != nil {
			return nil, err
		}
		raw = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
		if err := os.WriteFile(path, raw, 0o600); err != nil {
			return nil, err
		}
	} else if err != nil {
		return nil, err
	}
	block, _ := pem.Decode(raw)
	if block == nil {
		return nil, fmt.Errorf("%s: no PEM block", path)
	}
	key, err := x509.ParsePKCS8PrivateKey(block.Bytes)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	signer, ok := key.(crypto.Signer)
	if !ok {
		return nil, fmt.Errorf("%s: not a signing key", path)
	}
	return NewSigner(signer, "dev-1")
}
