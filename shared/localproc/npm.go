package localproc

import (
	"bytes"
	"crypto/sha256"
	"embed"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
)

// tools is the committed package.json and package-lock.json of the local
// stand-ins: every machine installs the very same package tree (npm ci).
//
//go:embed npm/package.json npm/package-lock.json
var tools embed.FS

// stamp, inside node_modules (which npm ci replaces), records the lockfile
// an install completed from: a changed lockfile or a cut-short install
// installs again.
const stamp = ".codescan-lock-sha256"

// NPMFile returns the file that matches pattern (a filepath.Glob pattern
// relative to node_modules) under root/.local/npm, installing the tools
// there with npm ci from the committed lockfile first when they are missing
// or were installed from another lockfile.
func NPMFile(root, pattern string) (string, error) {
	prefix := filepath.Join(root, ".local", "npm")
	if err := installTools(prefix); err != nil {
		return "", err
	}
	m, _ := filepath.Glob(filepath.Join(prefix, "node_modules", pattern))
	if len(m) == 0 {
		return "", fmt.Errorf("%s not found in %s (installed from shared/localproc/npm/package-lock.json)", pattern, prefix)
	}
	return m[0], nil
}

func installTools(prefix string) error {
	lock, err := tools.ReadFile("npm/package-lock.json")
	if err != nil {
		return err
	}
	sum := sha256.Sum256(lock)
	want := []byte(hex.EncodeToString(sum[:]))
	stampPath := filepath.Join(prefix, "node_modules", stamp)
	if have, err := os.ReadFile(stampPath); err == nil && bytes.Equal(have, want) {
		return nil
	}
	if err := os.MkdirAll(prefix, 0o755); err != nil {
		return err
	}
	// One install at a time per checkout: test binaries and the dev server
	// may start together on a fresh clone.
	unlock, err := lockFile(filepath.Join(prefix, ".install-lock"))
	if err != nil {
		return err
	}
	defer unlock()
	if have, err := os.ReadFile(stampPath); err == nil && bytes.Equal(have, want) {
		return nil // installed by whoever held the lock
	}
	for _, name := range []string{"package.json", "package-lock.json"} {
		b, err := tools.ReadFile("npm/" + name)
		if err != nil {
			return err
		}
		if err := os.WriteFile(filepath.Join(prefix, name), b, 0o644); err != nil {
			return err
		}
	}
	cmd := exec.Command("npm", "ci", "--prefix", prefix, "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("npm ci in %s: %w", prefix, err)
	}
	return os.WriteFile(stampPath, want, 0o644)
}
