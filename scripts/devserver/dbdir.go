package main

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// EnvOnDisk keeps DynamoDB Local's data on disk (.local/dynamodb) even
// where a memory-backed file system is at hand.
const EnvOnDisk = "DYNAMODB_ON_DISK"

// shm is the memory-backed file system of Linux.
const shm = "/dev/shm"

// dynamoDir returns the directory DynamoDB Local keeps the table in. On
// disk, DynamoDB Local syncs every write to the disk (SQLite): 10,000 small
// items took 62 s there (216 s with the stream on) against 4-7 s in
// memory. So where /dev/shm exists the data lives there, in a directory of
// this checkout that .local/dynamodb links to: kept across make run and
// across restarts of DynamoDB Local, lost at reboot (then the demo is
// seeded again). make reset removes the link, and the data with it at the
// next start. An older checkout's .local/dynamodb directory stays in use
// (on disk) until make reset.
func dynamoDir(localDir string) (string, error) {
	link := filepath.Join(localDir, "dynamodb")
	if os.Getenv(EnvOnDisk) != "" {
		return link, nil
	}
	if fi, err := os.Stat(shm); err != nil || !fi.IsDir() {
		return link, nil
	}
	sum := sha256.Sum256([]byte(localDir))
	target := filepath.Join(shm, "codescan-"+hex.EncodeToString(sum[:6]), "dynamodb")
	fi, err := os.Lstat(link)
	switch {
	case err == nil && fi.Mode()&os.ModeSymlink != 0:
		return link, nil // as made before, or pointed elsewhere on purpose
	case err == nil:
		fmt.Fprintf(os.Stderr, "devserver: DynamoDB Local keeps its data on disk in %s (writes 15-40x slower); make reset moves it to %s\n", link, shm)
		return link, nil
	case !errors.Is(err, os.ErrNotExist):
		return "", err
	}
	// A new checkout, or after make reset: what the memory holds is stale.
	if err := os.RemoveAll(target); err != nil {
		return "", err
	}
	if err := os.MkdirAll(target, 0o700); err != nil {
		return "", err
	}
	if err := os.Symlink(target, link); err != nil {
		return "", err
	}
	return link, nil
}
