// Command clientflow replays the real command-line client's flows
// (CLIENT-ROUTES.md) against a running API and parses every answer with
// the client's required fields:
//
//	API_URL=http://127.0.0.1:3000/api/v1 API_KEY=<admin key from .local/demo.json> go run ./scripts/clientflow
//
// Its test runs the same flows against every group's handlers on a
// loopback server and DynamoDB Local, in make test.
package main

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"time"
)

func main() {
	base, key := os.Getenv("API_URL"), os.Getenv("API_KEY")
	if base == "" || key == "" {
		fmt.Fprintln(os.Stderr, "clientflow: set API_URL (ending in /api/v1) and API_KEY (a user with scans.upload_scan and policies.manage_policy)")
		os.Exit(2)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	c := &client{base: base, key: key, http: &http.Client{Timeout: 150 * time.Second}, poll: time.Second,
		logf: func(f string, a ...any) { fmt.Printf(f+"\n", a...) }}
	if err := c.run(ctx); err != nil {
		fmt.Fprintln(os.Stderr, "clientflow:", err)
		os.Exit(1)
	}
	fmt.Println("clientflow: every flow passed")
}
