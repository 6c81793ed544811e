// Command bootstrap is the policies Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/policies"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(policies.New(config.MustLoad(context.Background())))
}
