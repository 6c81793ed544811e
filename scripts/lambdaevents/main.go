// Command lambdaevents keeps events/ — one API Gateway REST API (payload 1.0)
// proxy event per route of the table, the events `sam local invoke -e`
// takes — and replays them locally.
//
//	go run ./scripts/lambdaevents gen                   # rewrite events/*.json
//	go run ./scripts/lambdaevents invoke -fn teams -event events/teams-create.json
//
// invoke is `sam local invoke` without containers: it seeds the demo data on
// DynamoDB Local (DYNAMODB_ENDPOINT, or one it starts), puts the demo
// admin's API key and the seeded ids into the event, runs it through the
// group's Lambda entry and prints the response the function returns.
package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/acme/codescan-api/shared/deployspec"
	"github.com/acme/codescan-api/shared/dynamolocal"
	"github.com/acme/codescan-api/shared/routes"
)

func main() {
	if len(os.Args) < 2 {
		usage()
	}
	var err error
	switch os.Args[1] {
	case "gen":
		err = gen()
	case "invoke":
		fs := flag.NewFlagSet("invoke", flag.ExitOnError)
		fn := fs.String("fn", "", "group whose function runs the event ("+strings.Join(routes.Groups(), ", ")+")")
		event := fs.String("event", "", "event file, e.g. events/teams-create.json")
		_ = fs.Parse(os.Args[2:])
		if *fn == "" || *event == "" {
			usage()
		}
		err = invoke(*fn, *event)
	default:
		usage()
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "lambdaevents:", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, "usage: lambdaevents gen | lambdaevents invoke -fn <group> -event <file>")
	os.Exit(2)
}

// generate returns every route's event file (name relative to events/ and
// content).
func generate() (map[string][]byte, error) {
	out := map[string][]byte{}
	for i, r := range routes.Table {
		s, ok := sampleOf(r)
		if !ok {
			return nil, fmt.Errorf("%s has no sample in scripts/lambdaevents/samples.go", r.Pattern())
		}
		name := s.File + ".json"
		if _, dup := out[name]; dup {
			return nil, fmt.Errorf("two routes write %s", name)
		}
		ev, err := newEvent(r, s, epoch.Add(time.Duration(i)*time.Second))
		if err != nil {
			return nil, err
		}
		var b bytes.Buffer
		enc := json.NewEncoder(&b)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		if err := enc.Encode(ev); err != nil {
			return nil, err
		}
		out[name] = b.Bytes()
	}
	if len(out) != len(samples) {
		return nil, errors.New("samples.go has samples for routes the table does not have")
	}
	return out, nil
}

func gen() error {
	root, err := dynamolocal.Root()
	if err != nil {
		return err
	}
	files, err := generate()
	if err != nil {
		return err
	}
	dir := filepath.Join(root, "events")
	old, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, f := range old {
		if _, keep := files[filepath.Base(f)]; !keep {
			if err := os.Remove(f); err != nil {
				return err
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
			return err
		}
	}
	fmt.Printf("wrote %d events to events/\n", len(files))
	return nil
}

func invoke(group, eventFile string) error {
	raw, err := os.ReadFile(eventFile)
	if err != nil {
		return err
	}
	ctx := context.Background()
	if os.Getenv("DYNAMODB_ENDPOINT") == "" {
		root, err := dynamolocal.Root()
		if err != nil {
			return err
		}
		ddb, err := dynamolocal.Start(ctx, root, dynamolocal.Options{})
		if err != nil {
			return err
		}
		defer ddb.Stop()
		os.Setenv("DYNAMODB_ENDPOINT", ddb.Endpoint)
	}
	// A table of its own, so a shared DynamoDB Local keeps its other data.
	os.Setenv("TABLE_NAME", fmt.Sprintf("invoke-%d", time.Now().UnixNano()))
	w, err := newWorld(ctx)
	if err != nil {
		return err
	}
	// Like sam local invoke: the function's logs on stderr, its response on stdout.
	w.deps.Server.Log = slog.New(slog.NewJSONHandler(os.Stderr, nil))
	r, payload, err := w.prepare(raw)
	if err != nil {
		return err
	}
	if r.Group != group {
		return fmt.Errorf("%s is %s, served by the %s function, not %s", eventFile, r.Pattern(), r.Group, group)
	}
	resp, actions, err := w.invoke(ctx, group, payload)
	if err != nil {
		return err
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", "  ")
	if err := enc.Encode(resp); err != nil {
		return err
	}
	fmt.Fprintf(os.Stderr, "%s -> %d; DynamoDB actions: %s\n", r.Pattern(), resp.StatusCode, strings.Join(actions, ", "))
	if missing := ungranted(group, actions); len(missing) > 0 {
		return fmt.Errorf("%s is not granted %v: add them to shared/deployspec", group, missing)
	}
	return nil
}

// ungranted returns the actions deployspec does not grant the group.
func ungranted(group string, actions []string) []string {
	var out []string
	for _, a := range actions {
		if !slices.Contains(deployspec.Of(group).TableActions, a) {
			out = append(out, a)
		}
	}
	return out
}
