// Command mint-token prints a bearer token for a demo user of the local dev
// server, signed with the dev key in .local (make token EMAIL=...).
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/acme/codescan-api/shared/demo"
	"github.com/acme/codescan-api/shared/devjwt"
	"github.com/acme/codescan-api/shared/dynamolocal"
)

func main() {
	email := flag.String("email", "", "demo user email (see .local/demo.json)")
	ttl := flag.Duration("ttl", time.Hour, "token lifetime")
	flag.Parse()
	if err := run(*email, *ttl); err != nil {
		fmt.Fprintln(os.Stderr, "mint-token:", err)
		os.Exit(1)
	}
}

func run(email string, ttl time.Duration) error {
	root, err := dynamolocal.Root()
	if err != nil {
		return err
	}
	raw, err := os.ReadFile(filepath.Join(root, ".local", "demo.json"))
	if err != nil {
		return fmt.Errorf("%w (run make run first)", err)
	}
	var doc demo.Document
	if err := json.Unmarshal(raw, &doc); err != nil {
		return err
	}
	signer, err := devjwt.LoadOrCreateRSA(filepath.Join(root, ".local", "dev-jwt-key.pem"))
	if err != nil {
		return err
	}
	issuer := doc.BaseURL[:len(doc.BaseURL)-len("/api/v1")] + "/dev"
	for _, c := range doc.Companies {
		for _, u := range c.Users {
			if u.Email == email {
				tok, err := signer.Mint(devjwt.Claims{Subject: u.Subject, Issuer: issuer, Audience: "codescan-api", TTL: ttl})
				if err != nil {
					return err
				}
				fmt.Println(tok)
				return nil
			}
		}
	}
	return fmt.Errorf("no demo user %q", email)
}
