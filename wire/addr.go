package wire

import (
	"fmt"
	"net"
	"strings"
	"time"
)

// TCPScheme starts a HONE_SOCKET value that names a TCP address
// ("tcp://10.0.0.5:41234") rather than the path of a Unix socket. Trials
// on other machines (a cluster executor) connect over TCP; trials on
// hone's machine connect to a Unix socket.
const TCPScheme = "tcp://"

// DialTimeout bounds a trial's connection to hone.
const DialTimeout = 30 * time.Second

// Addr splits a HONE_SOCKET value into the network and address that
// net.Dial takes: ("tcp", "host:port") for a TCPScheme value, ("unix",
// path) for anything else. It fails for an empty value or a TCP address
// without a port.
func Addr(socket string) (network, address string, err error) {
	switch {
	case socket == "":
		return "", "", fmt.Errorf("%s is empty", EnvSocket)
	case strings.HasPrefix(socket, TCPScheme):
		hostport := strings.TrimPrefix(socket, TCPScheme)
		if _, port, err := net.SplitHostPort(hostport); err != nil || port == "" {
			return "", "", fmt.Errorf("%s=%q: want %sHOST:PORT", EnvSocket, socket, TCPScheme)
		}
		return "tcp", hostport, nil
	}
	return "unix", socket, nil
}

// Dial connects to hone at a HONE_SOCKET value (see Addr).
func Dial(socket string) (net.Conn, error) {
	network, address, err := Addr(socket)
	if err != nil {
		return nil, err
	}
	return net.DialTimeout(network, address, DialTimeout)
}
