// Package config builds, once per process, what every group handler needs
// from the environment: the table, the authenticator and the logger.
package config

import (
	"context"
	"fmt"
	"log/slog"
	"os"

	"github.com/MicahParks/keyfunc/v3"
	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"

	"github.com/acme/codescan-api/shared/auth"
	"github.com/acme/codescan-api/shared/httpapi"
	"github.com/acme/codescan-api/shared/store"
	"github.com/acme/codescan-api/shared/tabledef"
)

// Env is the process configuration.
type Env struct {
	TableName string // TABLE_NAME
	// DynamoEndpoint (DYNAMODB_ENDPOINT) points at DynamoDB Local; empty in AWS.
	DynamoEndpoint string
	JWTIssuer      string // JWT_ISSUER
	JWTAudience    string // JWT_AUDIENCE
	JWKSURL        string // JWKS_URL; empty disables bearer tokens
}

// FromEnv reads Env from environment variables.
func FromEnv() Env {
	e := Env{
		TableName:      os.Getenv("TABLE_NAME"),
		DynamoEndpoint: os.Getenv("DYNAMODB_ENDPOINT"),
		JWTIssuer:      os.Getenv("JWT_ISSUER"),
		JWTAudience:    os.Getenv("JWT_AUDIENCE"),
		JWKSURL:        os.Getenv("JWKS_URL"),
	}
	if e.TableName == "" {
		e.TableName = tabledef.DefaultTableName
	}
	return e
}

// Deps is what a group constructor receives.
type Deps struct {
	Server *httpapi.Server
	Store  *store.Store
}

// NewDynamoDB returns a client for AWS, or for DynamoDB Local when endpoint
// is set (with static dummy credentials, which Local ignores).
func NewDynamoDB(ctx context.Context, endpoint string) (*dynamodb.Client, error) {
	var opts []func(*awsconfig.LoadOptions) error
	if endpoint != "" {
		opts = append(opts,
			awsconfig.WithRegion("us-east-1"),
			awsconfig.WithCredentialsProvider(credentials.NewStaticCredentialsProvider("local", "local", "")))
	}
	cfg, err := awsconfig.LoadDefaultConfig(ctx, opts...)
	if err != nil {
		return nil, fmt.Errorf("aws config: %w", err)
	}
	return dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) {
		if endpoint != "" {
			o.BaseEndpoint = aws.String(endpoint)
		}
	}), nil
}

// NewLogger is the JSON logger every process uses.
func NewLogger() *slog.Logger { return slog.New(slog.NewJSONHandler(os.Stdout, nil)) }

// Load builds Deps from the environment (used by every Lambda main).
func Load(ctx context.Context) (Deps, error) {
	env := FromEnv()
	db, err := NewDynamoDB(ctx, env.DynamoEndpoint)
	if err != nil {
		return Deps{}, err
	}
	st := store.New(db, env.TableName)
	jwtCfg := auth.JWTConfig{Issuer: env.JWTIssuer, Audience: env.JWTAudience}
	if env.JWKSURL != "" {
		// The JWKS is fetched once and refreshed in the background, so
		// warm invocations verify tokens without a network call.
		k, err := keyfunc.NewDefaultCtx(ctx, []string{env.JWKSURL})
		if err != nil {
			return Deps{}, fmt.Errorf("jwks: %w", err)
		}
		jwtCfg.Keys = k.Keyfunc
	}
	return Deps{
		Server: &httpapi.Server{Auth: auth.New(st, jwtCfg), Log: NewLogger()},
		Store:  st,
	}, nil
}

// MustLoad is Load for Lambda mains, where a failure should end the cold start.
func MustLoad(ctx context.Context) Deps {
	d, err := Load(ctx)
	if err != nil {
		slog.Error("configuration", "error", err.Error())
		os.Exit(1)
	}
	return d
}
