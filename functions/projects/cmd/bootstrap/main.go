// Command bootstrap is the projects Lambda function.
package main

import (
	"context"

	"github.com/acme/codescan-api/functions/projects"
	"github.com/acme/codescan-api/shared/config"
	"github.com/acme/codescan-api/shared/lambdahttp"
)

func main() {
	lambdahttp.Start(projects.New(config.MustLoad(context.Background())))
}
