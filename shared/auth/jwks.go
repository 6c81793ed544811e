package auth

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"sync"
	"time"

	"github.com/MicahParks/jwkset"
	"github.com/MicahParks/keyfunc/v3"
	"github.com/golang-jwt/jwt/v5"
)

// JWKS timing: every fetch is bounded by FetchTimeout; the set is refreshed
// in the background once it is RefreshAfter old, again on a token signed
// by a key it does not hold (at most once per RetryAfter), and after a
// failed first fetch bearer tokens are answered at once for RetryAfter
// before the next attempt, so a JWKS that is down costs each request
// nothing.
const (
	FetchTimeout = 2 * time.Second
	RefreshAfter = 10 * time.Minute
	RetryAfter   = 5 * time.Second
	maxJWKSBytes = 1 << 20
)

// JWKS is a remote key set fetched on the first bearer token, never on
// start-up, cached and refreshed in the background.
type JWKS struct {
	url    string
	client *http.Client

	mu         sync.Mutex
	keys       keyfunc.Keyfunc // nil until the first successful fetch
	fetchedAt  time.Time
	attemptAt  time.Time // the last fetch started
	refreshing bool

	// Now is the clock of the refresh and retry intervals (time.Now when
	// nil; tests set it before the first token).
	Now func() time.Time
}

func (j *JWKS) now() time.Time {
	if j.Now == nil {
		return time.Now()
	}
	return j.Now()
}

// NewJWKS returns the key set at url; nothing is fetched yet.
func NewJWKS(url string) *JWKS {
	return &JWKS{url: url, client: &http.Client{Timeout: FetchTimeout}}
}

// Keyfunc is the jwt.Keyfunc of the set. Without keys (the first fetch
// failed) it returns ErrKeysUnavailable.
func (j *JWKS) Keyfunc(t *jwt.Token) (any, error) {
	keys, err := j.current()
	if err != nil {
		return nil, err
	}
	key, err := keys.Keyfunc(t)
	if errors.Is(err, jwkset.ErrKeyNotFound) && j.mayRetry() {
		// Perhaps a key the issuer has just rotated in.
		if keys, ferr := j.fetch(); ferr == nil {
			return keys.Keyfunc(t)
		}
	}
	return key, err
}

// current returns the cached keys, fetching them when there are none yet
// and starting a background refresh when they are old.
func (j *JWKS) current() (keyfunc.Keyfunc, error) {
	j.mu.Lock()
	keys, stale := j.keys, j.now().Sub(j.fetchedAt) > RefreshAfter && !j.refreshing
	if keys != nil && stale {
		j.refreshing = true
		go func() {
			_, _ = j.fetch() // the old keys stay on failure
			j.mu.Lock()
			j.refreshing = false
			j.mu.Unlock()
		}()
	}
	j.mu.Unlock()
	if keys != nil {
		return keys, nil
	}
	if !j.mayRetry() {
		return nil, ErrKeysUnavailable
	}
	keys, err := j.fetch()
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrKeysUnavailable, err)
	}
	return keys, nil
}

// mayRetry reports whether a fetch may start now, and if so claims it.
func (j *JWKS) mayRetry() bool {
	j.mu.Lock()
	defer j.mu.Unlock()
	now := j.now()
	if now.Sub(j.attemptAt) < RetryAfter {
		return false
	}
	j.attemptAt = now
	return true
}

// fetch downloads and parses the set within FetchTimeout and caches it.
func (j *JWKS) fetch() (keyfunc.Keyfunc, error) {
	ctx, cancel := context.WithTimeout(context.Background(), FetchTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, j.url, nil)
	if err != nil {
		return nil, err
	}
	res, err := j.client.Do(req)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("jwks: status %d", res.StatusCode)
	}
	raw, err := io.ReadAll(io.LimitReader(res.Body, maxJWKSBytes))
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	keys, err := keyfunc.NewJWKSetJSON(raw)
	if err != nil {
		return nil, fmt.Errorf("jwks: %w", err)
	}
	j.mu.Lock()
	j.keys, j.fetchedAt = keys, j.now()
	j.mu.Unlock()
	return keys, nil
}
