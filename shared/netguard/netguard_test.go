package netguard_test

import (
	"net/netip"
	"testing"

	"github.com/acme/codescan-api/shared/netguard"
)

func TestBlocked(t *testing.T) {
	blocked := []string{
		"10.0.0.1", "172.16.5.4", "172.31.255.255", "192.168.1.1", // RFC 1918
		"127.0.0.1", "127.8.9.10", "::1", // loopback
		"169.254.169.254", "169.254.0.1", "fe80::1", // link-local, metadata
		"100.64.0.1", "100.100.100.200", // CGNAT, Alibaba metadata
		"192.0.0.192",              // Oracle metadata
		"fd00:ec2::254", "fc00::1", // unique-local, AWS IPv6 metadata
		"0.0.0.0", "::", "0.1.2.3", // unspecified, this network
		"224.0.0.1", "ff02::1", // multicast
		"255.255.255.255", "240.0.0.1", // reserved
		"198.18.0.1",                          // benchmarking
		"168.63.129.16",                       // Azure host
		"::ffff:10.0.0.1", "::ffff:127.0.0.1", // IPv4-mapped
		"64:ff9b::a00:1", "2002:a00:1::1", // NAT64, 6to4
		"fec0::1", // site-local
	}
	for _, s := range blocked {
		if !netguard.Blocked(netip.MustParseAddr(s), false) {
			t.Errorf("%s is not blocked", s)
		}
	}
	public := []string{"140.82.112.6", "8.8.8.8", "1.1.1.1", "2606:50c0:8000::154", "172.32.0.1", "100.128.0.1"}
	for _, s := range public {
		if netguard.Blocked(netip.MustParseAddr(s), false) {
			t.Errorf("%s is blocked", s)
		}
	}
	// Allowing loopback allows loopback only.
	for _, s := range []string{"127.0.0.1", "::1", "::ffff:127.0.0.1"} {
		if netguard.Blocked(netip.MustParseAddr(s), true) {
			t.Errorf("%s blocked with loopback allowed", s)
		}
	}
	for _, s := range []string{"10.0.0.1", "169.254.169.254", "fd00:ec2::254"} {
		if !netguard.Blocked(netip.MustParseAddr(s), true) {
			t.Errorf("%s allowed with loopback allowed", s)
		}
	}
}
