package benchkit

import (
	"testing"
	"time"
)

func TestPercentileAndMean(t *testing.T) {
	var ss []Sample
	for n := 100; n >= 1; n-- {
		ss = append(ss, Sample{Latency: time.Duration(n) * time.Millisecond, RCU: float64(n)})
	}
	if got := Percentile(ss, 0.5); got != 51*time.Millisecond {
		t.Errorf("p50 %s", got)
	}
	if got := Percentile(ss, 0.95); got != 96*time.Millisecond {
		t.Errorf("p95 %s", got)
	}
	if got := Percentile(ss, 1); got != 100*time.Millisecond {
		t.Errorf("p100 %s", got)
	}
	if got := Millis(1234567 * time.Microsecond); got != "1234.6" {
		t.Errorf("Millis %s", got)
	}
	if got := MeanRCU(ss); got != 50.5 {
		t.Errorf("mean RCU %v", got)
	}
}

func TestEnv(t *testing.T) {
	t.Setenv("BENCHKIT_N", "42")
	t.Setenv("BENCHKIT_BAD", "x")
	t.Setenv("BENCHKIT_S", "")
	if EnvInt("BENCHKIT_N", 1) != 42 || EnvInt("BENCHKIT_BAD", 1) != 1 || EnvInt("BENCHKIT_UNSET", 7) != 7 {
		t.Error("EnvInt")
	}
	if EnvString("BENCHKIT_S", "d") != "d" || EnvString("BENCHKIT_N", "d") != "42" {
		t.Error("EnvString")
	}
}
