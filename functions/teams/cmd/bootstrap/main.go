// Command bootstrap is the teams Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/teams"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(teams.New(config.MustLoad(context.Background())))
}
