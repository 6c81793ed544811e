// Package chain loads the SDK configuration through the SDK's whole
// credential chain (profiles, SSO, STS, the instance metadata service) with
// the project's retry policy: for tools run by people (the operator) and
// development processes, never for a Lambda function (awsclient.FromEnv).
package chain

import (
	"context"

	"github.com/aws/aws-sdk-go-v2/aws"
	awsconfig "github.com/aws/aws-sdk-go-v2/config"

	"github.com/acme/codescan-api/shared/awsclient"
)

// Load is awsconfig.LoadDefaultConfig with the project's retry policy.
func Load(ctx context.Context, opts ...func(*awsconfig.LoadOptions) error) (aws.Config, error) {
	return awsconfig.LoadDefaultConfig(ctx, append(opts, awsconfig.WithRetryer(awsclient.Retryer))...)
}
