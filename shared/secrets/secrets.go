// Package secrets seals small secrets (source-code-host tokens) for storage
// and opens them again. In AWS the key is a KMS key and each secret is
// encrypted directly by KMS (tokens are far below KMS's 4 KB plaintext
// limit, so no data keys are needed and every use is in CloudTrail); in
// development it is an AES-256-GCM key in a local file. Both bind a sealed
// value to its record (KMS encryption context, GCM additional data), so a
// sealed value copied into another record does not open.
package secrets

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"github.com/aws/aws-sdk-go-v2/service/kms"

	"github.com/acme/codescan-api/shared/awsclient"
	"github.com/acme/codescan-api/shared/reporoot"
)

// Sealer seals and opens secrets. record names what the secret belongs to
// (for example "integration/<company>/<uuid>"); Open needs the same record.
type Sealer interface {
	Seal(ctx context.Context, plaintext, record string) (string, error)
	Open(ctx context.Context, sealed, record string) (string, error)
}

// ErrMalformed is returned for a sealed value that this sealer did not make
// or that does not open for the record.
var ErrMalformed = errors.New("secrets: sealed value does not open")

// Environment variables FromEnv reads.
const (
	EnvKMSKeyID = "INTEGRATION_KMS_KEY_ID" // KMS key id, ARN or alias; selects KMS
	EnvKeyFile  = "INTEGRATION_KEY_FILE"   // local key file (default .local/integration-token.key)
)

// FromEnv returns the KMS sealer when INTEGRATION_KMS_KEY_ID is set, and the
// local key-file sealer otherwise. Inside Lambda a KMS key is required: a
// key file there would be lost with the execution environment.
func FromEnv(ctx context.Context) (Sealer, error) {
	if keyID := os.Getenv(EnvKMSKeyID); keyID != "" {
		cfg, err := awsclient.FromEnv()
		if err != nil {
			return nil, err
		}
		return NewKMS(kms.NewFromConfig(cfg), keyID), nil
	}
	if os.Getenv("AWS_LAMBDA_FUNCTION_NAME") != "" {
		return nil, fmt.Errorf("secrets: %s must be set in AWS Lambda", EnvKMSKeyID)
	}
	path := os.Getenv(EnvKeyFile)
	if path == "" {
		root, err := reporoot.Find()
		if err != nil {
			return nil, err
		}
		path = filepath.Join(root, ".local", "integration-token.key")
	}
	return LoadOrCreateKeyFile(path)
}
