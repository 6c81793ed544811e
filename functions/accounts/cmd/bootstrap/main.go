// Command bootstrap is the accounts Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/accounts"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(accounts.New(config.MustLoad(context.Background())))
}
