package config

import (
	"log/slog"
	"testing"
)

// LOG_LEVEL takes the four level names in any case, defaults to info and
// refuses anything else at start.
func TestLogLevel(t *testing.T) {
	for in, want := range map[string]slog.Level{"": slog.LevelInfo, "debug": slog.LevelDebug, "INFO": slog.LevelInfo, " warn ": slog.LevelWarn, "Error": slog.LevelError} {
		if got, err := LogLevel(in); err != nil || got != want {
			t.Errorf("%q: %v %v, want %v", in, got, err, want)
		}
	}
	t.Setenv("LOG_LEVEL", "verbose")
	if _, err := FromEnv(); err == nil {
		t.Error("LOG_LEVEL=verbose accepted")
	}
	t.Setenv("LOG_LEVEL", "warn")
	if env, err := FromEnv(); err != nil || env.LogLevel != slog.LevelWarn {
		t.Errorf("warn: %v %v", env.LogLevel, err)
	}
}
