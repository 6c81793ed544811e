// Package reporoot finds the repository root, where local development keeps
// its state (.local). It is kept apart from shared/dynamolocal so that code
// in the Lambda builds (the local key-file sealer) can find it without
// linking the DynamoDB Local launcher.
package reporoot

import (
	"errors"
	"os"
	"path/filepath"
)

// Find returns the directory holding go.mod, walking up from the working
// directory.
func Find() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}
