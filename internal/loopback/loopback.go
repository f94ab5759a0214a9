// Package loopback gives local tools and tests a free TCP port on 127.0.0.1:
// everything they start listens on loopback only.
package loopback

import "net"

// FreePort returns a TCP port on 127.0.0.1 that was free a moment ago.
func FreePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}
