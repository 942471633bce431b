package wire

import (
	"net"
	"path/filepath"
	"testing"
)

func TestAddr(t *testing.T) {
	for _, tc := range []struct {
		in, network, address string
		bad                  bool
	}{
		{in: "/tmp/hone/3", network: "unix", address: "/tmp/hone/3"},
		{in: "rel/sock", network: "unix", address: "rel/sock"},
		{in: "tcp://10.0.0.5:41234", network: "tcp", address: "10.0.0.5:41234"},
		{in: "tcp://[::1]:80", network: "tcp", address: "[::1]:80"},
		{in: "tcp://node7:9", network: "tcp", address: "node7:9"},
		{in: "", bad: true},
		{in: "tcp://10.0.0.5", bad: true},
		{in: "tcp://10.0.0.5:", bad: true},
	} {
		network, address, err := Addr(tc.in)
		if tc.bad {
			if err == nil {
				t.Errorf("Addr(%q) = %q %q, want an error", tc.in, network, address)
			}
			continue
		}
		if err != nil || network != tc.network || address != tc.address {
			t.Errorf("Addr(%q) = %q, %q, %v; want %q, %q", tc.in, network, address, err, tc.network, tc.address)
		}
	}
}

func TestDialBoth(t *testing.T) {
	unix, err := net.Listen("unix", filepath.Join(t.TempDir(), "s"))
	if err != nil {
		t.Fatal(err)
	}
	defer unix.Close()
	tcp, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer tcp.Close()
	for _, c := range []struct {
		ln   net.Listener
		addr string
	}{{unix, unix.Addr().String()}, {tcp, TCPScheme + tcp.Addr().String()}} {
		got := make(chan string, 1)
		go func() {
			conn, err := c.ln.Accept()
			if err != nil {
				got <- err.Error()
				return
			}
			defer conn.Close()
			line, err := NewReader(conn).ReadLine()
			if err != nil {
				got <- err.Error()
				return
			}
			got <- string(line)
		}()
		conn, err := Dial(c.addr)
		if err != nil {
			t.Fatalf("Dial(%q): %v", c.addr, err)
		}
		if _, err := conn.Write([]byte("{\"type\":\"hello\"}\n")); err != nil {
			t.Fatal(err)
		}
		if line := <-got; line != `{"type":"hello"}` {
			t.Errorf("over %q the listener read %q", c.addr, line)
		}
		conn.Close()
	}
}
