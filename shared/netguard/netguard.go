// Package netguard keeps outbound connections the service makes on behalf
// of a customer (source-code hosts, webhook receivers) away from internal
// addresses: the check runs at dial time, after DNS resolution, so a name
// that resolves (or re-resolves) to an internal address is refused.
package netguard

import (
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"syscall"
	"time"
)

// blockedPrefixes are ranges beyond what netip's predicates cover that must
// never be reached from the service: shared address space (CGNAT, also
// Alibaba's metadata address), IETF assignments (Oracle's metadata address),
// benchmarking, reserved, NAT64 and 6to4 (which embed any IPv4 address),
// deprecated site-local IPv6, and Azure's host address.
var blockedPrefixes = []netip.Prefix{
	netip.MustParsePrefix("0.0.0.0/8"),
	netip.MustParsePrefix("100.64.0.0/10"),
	netip.MustParsePrefix("192.0.0.0/24"),
	netip.MustParsePrefix("198.18.0.0/15"),
	netip.MustParsePrefix("240.0.0.0/4"),
	netip.MustParsePrefix("168.63.129.16/32"),
	netip.MustParsePrefix("64:ff9b::/96"),
	netip.MustParsePrefix("64:ff9b:1::/48"),
	netip.MustParsePrefix("2002::/16"),
	netip.MustParsePrefix("fec0::/10"),
}

// Blocked reports whether the service must not connect to ip: private
// (RFC 1918, unique-local fc00::/7, which holds AWS's fd00:ec2::254),
// loopback (unless allowLoopback), link-local (169.254.169.254, the cloud
// metadata address, is one), multicast, unspecified, and blockedPrefixes.
func Blocked(ip netip.Addr, allowLoopback bool) bool {
	ip = ip.Unmap()
	if ip.IsLoopback() {
		return !allowLoopback
	}
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range blockedPrefixes {
		if p.Contains(ip) {
			return true
		}
	}
	return false
}

// BlockedAddressError is the dial-time refusal of a blocked address.
type BlockedAddressError struct{ Addr string }

func (e *BlockedAddressError) Error() string {
	return fmt.Sprintf("connection to %s refused: not a public address", e.Addr)
}

// DialControl is a net.Dialer Control hook that refuses blocked addresses:
// it sees the address a connection is about to be made to, after DNS
// resolution.
func DialControl(allowLoopback bool) func(network, address string, _ syscall.RawConn) error {
	return func(_, address string, _ syscall.RawConn) error {
		host, _, err := net.SplitHostPort(address)
		if err != nil {
			return &BlockedAddressError{Addr: address}
		}
		ip, err := netip.ParseAddr(host)
		if err != nil || Blocked(ip, allowLoopback) {
			return &BlockedAddressError{Addr: address}
		}
		return nil
	}
}

// Client is an HTTP client for customer-named hosts: every connection goes
// through DialControl, no proxy (the guard would check the proxy, not the
// host), redirects are not followed (a 3xx is the answer), and timeout
// bounds the dial, the TLS handshake, the wait for headers and the whole
// exchange.
func Client(timeout time.Duration, allowLoopback bool) *http.Client {
	dialer := &net.Dialer{Timeout: timeout, Control: DialControl(allowLoopback)}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                  nil,
			DialContext:            dialer.DialContext,
			ForceAttemptHTTP2:      true,
			TLSHandshakeTimeout:    timeout,
			ResponseHeaderTimeout:  timeout,
			MaxResponseHeaderBytes: 64 << 10,
			MaxIdleConnsPerHost:    4,
			IdleConnTimeout:        60 * time.Second,
		},
		Timeout: timeout,
		CheckRedirect: func(*http.Request, []*http.Request) error {
			return http.ErrUseLastResponse
		},
	}
}
