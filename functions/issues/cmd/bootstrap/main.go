// Command bootstrap is the issues Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/issues"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(issues.New(config.MustLoad(context.Background())))
}
