package localproc

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"os"
	"os/exec"
	"path"
	"path/filepath"
	"syscall"
)

// GoTool returns the binary of pkg, a `tool` of the module in
// shared/localproc/gotools (its go.mod and go.sum pin the tool and every
// module it builds from), under root/.local/gotools, building it there
// with `go build` first when it is missing or was built from another
// go.mod or go.sum. The first build takes a minute or two.
func GoTool(root, pkg string) (string, error) {
	src := filepath.Join(root, "shared", "localproc", "gotools")
	want, err := pinDigest(src)
	if err != nil {
		return "", err
	}
	dir := filepath.Join(root, ".local", "gotools")
	bin := filepath.Join(dir, path.Base(pkg))
	stampPath := bin + ".pin-sha256"
	if have, err := os.ReadFile(stampPath); err == nil && bytes.Equal(have, want) {
		return bin, nil
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	// One build at a time per checkout: test binaries and the dev server
	// may start together on a fresh clone.
	unlock, err := lockFile(filepath.Join(dir, ".build-lock"))
	if err != nil {
		return "", err
	}
	defer unlock()
	if have, err := os.ReadFile(stampPath); err == nil && bytes.Equal(have, want) {
		return bin, nil // built by whoever held the lock
	}
	if err := goBuild(src, pkg, bin); err != nil {
		return "", err
	}
	return bin, os.WriteFile(stampPath, want, 0o644)
}

// pinDigest is the SHA-256 of the tool module's go.mod and go.sum.
func pinDigest(src string) ([]byte, error) {
	h := sha256.New()
	for _, name := range []string{"go.mod", "go.sum"} {
		b, err := os.ReadFile(filepath.Join(src, name))
		if err != nil {
			return nil, fmt.Errorf("the pinned local tools: %w", err)
		}
		h.Write(b)
	}
	return []byte(hex.EncodeToString(h.Sum(nil))), nil
}

// goBuild builds pkg of the module in src into bin: static (no C
// toolchain needed), written aside and renamed, so a cut-short build
// leaves no half binary.
func goBuild(src, pkg, bin string) error {
	fmt.Fprintf(os.Stderr, "localproc: building %s (pinned in %s), once\n", pkg, filepath.Join(src, "go.mod"))
	// -mod=readonly: go.sum is the pin, never updated here. GOWORK=off: a
	// go.work above the checkout must not pull the tool into its build list.
	cmd := exec.Command("go", "build", "-mod=readonly", "-trimpath", "-o", bin+".tmp", pkg)
	cmd.Dir = src
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOWORK=off")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s in %s: %w", pkg, src, err)
	}
	return os.Rename(bin+".tmp", bin)
}

// lockFile takes an exclusive lock on path (created if missing) and
// returns its release.
func lockFile(path string) (func(), error) {
	f, err := os.OpenFile(path, os.O_CREATE|os.O_RDWR, 0o644)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX); err != nil {
		f.Close()
		return nil, err
	}
	return func() { f.Close() }, nil
}
