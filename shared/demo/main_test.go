package demo_test

import (
	"testing"

	"github.com/acme/codescan-api/internal/testenv"
)

func TestMain(m *testing.M) { testenv.Main(m) }
