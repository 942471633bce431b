package process

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net"
	"os"
	"sync"
	"time"

	"github.com/hone-tune/hone/wire"
)

// server is the executor's one wire server: a Unix socket in the
// executor's private socket directory, or, for trials that run on other
// machines (Options.Listen), a TCP port. Every connection says hello
// first; the server reads that hello, finds the trial it names and hands
// the connection, hello included, to the trial's own listener, where it
// is admitted: the token is checked there, a refused connection is told
// why and the trial keeps waiting. A connection naming no waiting trial
// is refused here.
type server struct {
	ln        net.Listener
	advertise string // HONE_SOCKET: the socket's path, or tcp://HOST:PORT
	wg        sync.WaitGroup

	mu     sync.Mutex
	trials map[string]*trialListener
	closed bool
	conns  map[net.Conn]struct{} // connections not yet routed
}

// listenTCP starts the server on addr ("HOST:PORT"; an empty host means
// every interface, port 0 a free port). advertise is the HOST:PORT
// trials dial ("" = addr's host, or this machine's address when addr's
// host is empty or unspecified, with the port listened on).
func listenTCP(addr, advertise string) (*server, error) {
	ln, err := net.Listen("tcp", addr)
	if err != nil {
		return nil, fmt.Errorf("listen for trials on %s: %w", addr, err)
	}
	adv, err := advertised(addr, advertise, ln.Addr().(*net.TCPAddr).Port)
	if err != nil {
		ln.Close()
		return nil, err
	}
	return serve(ln, wire.TCPScheme+adv), nil
}

// listenUnix starts the server on a Unix socket at path; closing the
// server removes the socket.
func listenUnix(path string) (*server, error) {
	ln, err := net.ListenUnix("unix", &net.UnixAddr{Name: path, Net: "unix"})
	if err != nil {
		return nil, fmt.Errorf("trial socket: %w", err)
	}
	return serve(ln, path), nil
}

// serve routes ln's connections, which trials reach at advertise.
func serve(ln net.Listener, advertise string) *server {
	s := &server{
		ln:        ln,
		advertise: advertise,
		trials:    make(map[string]*trialListener),
		conns:     make(map[net.Conn]struct{}),
	}
	s.wg.Add(1)
	go s.accept()
	return s
}

// advertised returns the HOST:PORT that trials dial.
func advertised(addr, advertise string, port int) (string, error) {
	if advertise != "" {
		if _, _, err := net.SplitHostPort(advertise); err != nil {
			return "", fmt.Errorf("advertised address %q: want HOST:PORT", advertise)
		}
		return advertise, nil
	}
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return "", fmt.Errorf("listen address %q: want HOST:PORT", addr)
	}
	if ip := net.ParseIP(host); host == "" || (ip != nil && ip.IsUnspecified()) {
		if host, err = HostAddress(); err != nil {
			return "", err
		}
	}
	return net.JoinHostPort(host, fmt.Sprint(port)), nil
}

// HostAddress returns an address of this machine that other machines can
// reach: what its host name resolves to, when that is not a loopback
// address (a cluster's nodes know each other by name, and the name's
// address is on the network they share), else the first non-loopback
// unicast IPv4 address of an interface that is up (else IPv6), else the
// host name.
func HostAddress() (string, error) {
	if name, err := os.Hostname(); err == nil {
		if addrs, err := net.LookupHost(name); err == nil {
			for _, a := range addrs {
				if ip := net.ParseIP(a); ip != nil && !ip.IsLoopback() && ip.IsGlobalUnicast() {
					return a, nil
				}
			}
		}
	}
	ifaces, err := net.Interfaces()
	if err == nil {
		var v6 string
		for _, ifc := range ifaces {
			if ifc.Flags&net.FlagUp == 0 || ifc.Flags&net.FlagLoopback != 0 {
				continue
			}
			addrs, err := ifc.Addrs()
			if err != nil {
				continue
			}
			for _, a := range addrs {
				ipn, ok := a.(*net.IPNet)
				if !ok || !ipn.IP.IsGlobalUnicast() {
					continue
				}
				if ipn.IP.To4() != nil {
					return ipn.IP.String(), nil
				}
				if v6 == "" {
					v6 = ipn.IP.String()
				}
			}
		}
		if v6 != "" {
			return v6, nil
		}
	}
	host, herr := os.Hostname()
	if herr != nil {
		return "", fmt.Errorf("this machine's address: %w", errors.Join(err, herr))
	}
	return host, nil
}

// accept routes every connection until the listener is closed.
func (s *server) accept() {
	defer s.wg.Done()
	for {
		c, err := s.ln.Accept()
		if err != nil {
			var ne net.Error
			if errors.As(err, &ne) && ne.Timeout() {
				continue
			}
			return
		}
		s.mu.Lock()
		if s.closed {
			s.mu.Unlock()
			c.Close()
			return
		}
		s.conns[c] = struct{}{}
		s.wg.Add(1)
		s.mu.Unlock()
		go s.route(c)
	}
}

// route reads c's hello and hands c to the trial it names.
func (s *server) route(c net.Conn) {
	defer s.wg.Done()
	handed := false
	defer func() {
		s.mu.Lock()
		delete(s.conns, c)
		s.mu.Unlock()
		if !handed {
			c.Close()
		}
	}()
	if tc, ok := c.(*net.TCPConn); ok {
		_ = tc.SetNoDelay(true)
	}
	_ = c.SetReadDeadline(time.Now().Add(helloTimeout))
	r := wire.NewReader(c)
	line, err := r.ReadLine()
	if err != nil {
		if errors.Is(err, wire.ErrTooLong) {
			refuse(c, err)
		}
		return
	}
	_ = c.SetReadDeadline(time.Time{})
	m, err := wire.Decode(line)
	switch {
	case err != nil:
	case m.Type != wire.TypeHello:
		err = fmt.Errorf("%s out of turn: the first message must be hello", m.Type)
	}
	if err != nil {
		refuse(c, err)
		return
	}
	s.mu.Lock()
	tl := s.trials[m.TrialID]
	s.mu.Unlock()
	if tl == nil {
		refuse(c, fmt.Errorf("hello: no trial %q waits for a connection here", m.TrialID))
		return
	}
	replay := append(append(line, '\n'), r.Buffered()...)
	handed = tl.deliver(&replayConn{Conn: c, r: io.MultiReader(bytes.NewReader(replay), c)})
	if !handed {
		refuse(c, fmt.Errorf("hello: trial %q no longer waits for a connection", m.TrialID))
	}
}

// listen returns the listener of one trial's connections.
func (s *server) listen(trialID string) (*trialListener, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.closed {
		return nil, errors.New("trial listener: executor closed")
	}
	if _, ok := s.trials[trialID]; ok {
		return nil, fmt.Errorf("trial listener: trial %s already listens", trialID)
	}
	tl := &trialListener{s: s, id: trialID, conns: make(chan net.Conn), done: make(chan struct{})}
	s.trials[trialID] = tl
	return tl, nil
}

// close stops the server: no more connections are accepted or routed.
// The trials' listeners close with their trials.
func (s *server) close() error {
	s.mu.Lock()
	s.closed = true
	for c := range s.conns {
		c.Close()
	}
	s.mu.Unlock()
	err := s.ln.Close()
	s.wg.Wait()
	return err
}

// trialListener is a net.Listener of one trial's connections over the
// executor's wire server.
type trialListener struct {
	s     *server
	id    string
	conns chan net.Conn
	once  sync.Once
	done  chan struct{}
}

// deliver hands c to the trial; false if its listener is closed.
func (l *trialListener) deliver(c net.Conn) bool {
	select {
	case l.conns <- c:
		return true
	case <-l.done:
		return false
	}
}

// Accept returns the next connection routed to the trial.
func (l *trialListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

// Close stops routing connections to the trial.
func (l *trialListener) Close() error {
	l.once.Do(func() {
		close(l.done)
		l.s.mu.Lock()
		if l.s.trials[l.id] == l {
			delete(l.s.trials, l.id)
		}
		l.s.mu.Unlock()
	})
	return nil
}

// Addr returns the server's listening address.
func (l *trialListener) Addr() net.Addr { return l.s.ln.Addr() }

// replayConn is a connection whose first bytes, already read by the
// server to route it, are read again by the trial's side.
type replayConn struct {
	net.Conn
	r io.Reader
}

func (c *replayConn) Read(p []byte) (int, error) { return c.r.Read(p) }
