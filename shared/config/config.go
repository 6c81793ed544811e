// Package config builds, once per process, what every group handler needs
// from the environment: the table, the authenticator and the logger.
package config

import (
	"context"
	"fmt"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/awsclient"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/metrics"
	"github.com/acme/codescan-api/shared/reportstore"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/store/ledger"
	"github.com/acme/codescan-api/shared/store/tenancy"
	"github.com/acme/codescan-api/shared/tabledef"
	"github.com/acme/codescan-api/shared/unreachable"
)

// Env is the process configuration.
type Env struct {
	TableName string // TABLE_NAME
	// DynamoEndpoint (DYNAMODB_ENDPOINT) points at DynamoDB Local; empty in AWS.
	DynamoEndpoint string
	JWTIssuer      string // JWT_ISSUER
	JWTAudience    string // JWT_AUDIENCE
	JWKSURL        string // JWKS_URL; empty disables bearer tokens
	// AuditRetention (AUDIT_RETENTION_DAYS, default 400) is how long audit
	// log entries are kept before the table's TTL deletes them.
	AuditRetention time.Duration
	// RateLimit per user: RATE_LIMIT_PER_MINUTE (default 100) and
	// RATE_LIMIT_PER_HOUR (default 1000), the vendor's documented limits;
	// 0 in either disables rate limiting.
	RateLimit tenancy.RateLimit
	// LogLevel (LOG_LEVEL: debug, info, warn or error; default info) is
	// the least level logged.
	LogLevel slog.Level
}

// FromEnv reads Env from environment variables.
func FromEnv() (Env, error) {
	perMinute, err := intEnv("RATE_LIMIT_PER_MINUTE", 100)
	if err != nil {
		return Env{}, err
	}
	perHour, err := intEnv("RATE_LIMIT_PER_HOUR", 1000)
	if err != nil {
		return Env{}, err
	}
	retentionDays, err := intEnv("AUDIT_RETENTION_DAYS", int(ledger.DefaultAuditRetention/(24*time.Hour)))
	if err != nil {
		return Env{}, err
	}
	if retentionDays == 0 {
		return Env{}, fmt.Errorf("AUDIT_RETENTION_DAYS must be at least 1")
	}
	level, err := LogLevel(os.Getenv("LOG_LEVEL"))
	if err != nil {
		return Env{}, err
	}
	e := Env{
		AuditRetention: time.Duration(retentionDays) * 24 * time.Hour,
		RateLimit:      tenancy.RateLimit{PerMinute: perMinute, PerHour: perHour},
		LogLevel:       level,
		TableName:      os.Getenv("TABLE_NAME"),
		DynamoEndpoint: os.Getenv("DYNAMODB_ENDPOINT"),
		JWTIssuer:      os.Getenv("JWT_ISSUER"),
		JWTAudience:    os.Getenv("JWT_AUDIENCE"),
		JWKSURL:        os.Getenv("JWKS_URL"),
	}
	if e.TableName == "" {
		e.TableName = tabledef.DefaultTableName
	}
	return e, nil
}

func intEnv(name string, def int) (int, error) {
	raw := os.Getenv(name)
	if raw == "" {
		return def, nil
	}
	n, err := strconv.Atoi(raw)
	if err != nil || n < 0 {
		return 0, fmt.Errorf("%s must be a non-negative integer", name)
	}
	return n, nil
}

// LogLevel reads a LOG_LEVEL value: debug, info, warn or error (any case),
// info when empty.
func LogLevel(s string) (slog.Level, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "debug":
		return slog.LevelDebug, nil
	case "", "info":
		return slog.LevelInfo, nil
	case "warn":
		return slog.LevelWarn, nil
	case "error":
		return slog.LevelError, nil
	}
	return 0, fmt.Errorf("LOG_LEVEL must be debug, info, warn or error")
}

// NewServer returns the HTTP server settings of env: the authenticator on
// st, the JSON logger at env's level and the rate limit.
func NewServer(env Env, st *store.Store, jwtCfg auth.JWTConfig) *httpapi.Server {
	authn := auth.New(st.Tenancy, jwtCfg)
	srv := &httpapi.Server{Auth: authn, Log: NewLogger(env.LogLevel), Store: st.Tenancy}
	authn.Log = srv.Log
	if env.RateLimit.PerMinute > 0 && env.RateLimit.PerHour > 0 {
		srv.RateLimit = &httpapi.RateLimiter{Store: st.Tenancy, Limit: env.RateLimit}
	}
	return srv
}

// Deps is what a group constructor receives.
type Deps struct {
	Server *httpapi.Server
	Store  *store.Store
	// Metrics is the process's metric emitter (standard output in Lambda,
	// where log delivery turns its lines into CloudWatch metrics; nil, so
	// silent, elsewhere). Server.Metrics is the same emitter.
	Metrics *metrics.Emitter
	// Reports is the report bucket: the uploads group stores reports and
	// chunks there (its Lambda main, the dev server and the tests set it;
	// the other groups go without, and without the S3 client).
	Reports reportstore.Store
	// Exports is the bucket as exports use it (the issues group links
	// finished exports; nil: the export routes answer 503), ExportLinkTTL
	// how long a link works (DefaultExportLinkTTL when 0).
	Exports       reportstore.Exports
	ExportLinkTTL time.Duration
	// Now is the groups' clock for what they decide by the time (expiry
	// dates, leases, event times): time.Now when nil; tests set it.
	Now func() time.Time
}

// Clock is d.Now, or time.Now when that is nil.
func (d Deps) Clock() func() time.Time {
	if d.Now == nil {
		return time.Now
	}
	return d.Now
}

// NewDynamoDB returns a client for AWS, or for DynamoDB Local when endpoint
// is set (with static dummy credentials, which Local ignores).
func NewDynamoDB(ctx context.Context, endpoint string) (*dynamodb.Client, error) {
	cfg := awsclient.Static("us-east-1", "local", "local", "")
	if endpoint == "" {
		var err error
		if cfg, err = awsclient.FromEnv(); err != nil {
			return nil, err
		}
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		o.APIOptions = append(o.APIOptions, unreachable.Mark) // an unreachable table is a 503
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

// NewLogger is the JSON logger every process uses, at level (see LogLevel).
func NewLogger(level slog.Level) *slog.Logger {
	return slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: level}))
}

// Load builds Deps from the environment (used by every Lambda main).
func Load(ctx context.Context) (Deps, error) {
	env, err := FromEnv()
	if err != nil {
		return Deps{}, err
	}
	db, err := NewDynamoDB(ctx, env.DynamoEndpoint)
	if err != nil {
		return Deps{}, err
	}
	st := store.New(db, env.TableName, store.WithAuditRetention(env.AuditRetention))
	jwtCfg := auth.JWTConfig{Issuer: env.JWTIssuer, Audience: env.JWTAudience}
	if env.JWKSURL != "" {
		// Fetched on the first bearer token, never on the start path.
		jwtCfg.Keys = auth.NewJWKS(env.JWKSURL).Keyfunc
	}
	return Deps{
		Server: NewServer(env, st, jwtCfg),
		Store:  st,
	}, nil
}

// Must is the one fatal path of a Lambda main: a configuration it cannot
// start without logs the error and exits 1 (Lambda reports the failed
// start; a return would exit 0 and look like success).
func Must[T any](v T, err error) T {
	if err != nil {
		slog.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	return v
}

// MustLoad is Load for Lambda mains, where a failure should end the cold
// start, with the process's one metric emitter on standard output (which
// Lambda sends to CloudWatch Logs, where the lines become metrics).
func MustLoad(ctx context.Context) Deps {
	d := Must(Load(ctx))
	m := metrics.New(os.Stdout, time.Now)
	d.Metrics, d.Server.Metrics = m, m
	return d
}
