package process

import (
	"crypto/subtle"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/hone-tune/hone/wire"
)

// helloTimeout bounds how long a connection to a trial's socket may take
// to say hello before it is closed. A trial says hello as soon as it has
// connected.
const helloTimeout = 10 * time.Second

// admitted is the trial's own connection: the one whose first message is a
// hello with the trial's token.
type admitted struct {
	conn  net.Conn
	r     *wire.Reader
	hello []byte // the first line
}

// lobby holds the connections to a trial's socket that have not said
// hello yet.
type lobby struct {
	mu      sync.Mutex
	pending map[net.Conn]struct{}
	closed  bool
	wg      sync.WaitGroup
}

// add registers c, unless the lobby is closed.
func (l *lobby) add(c net.Conn) bool {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.closed {
		return false
	}
	if l.pending == nil {
		l.pending = make(map[net.Conn]struct{})
	}
	l.pending[c] = struct{}{}
	l.wg.Add(1)
	return true
}

// drop forgets c; the goroutine greeting it then calls l.wg.Done.
func (l *lobby) drop(c net.Conn) {
	l.mu.Lock()
	delete(l.pending, c)
	l.mu.Unlock()
}

// close closes every connection still waiting to say hello, and refuses
// new ones.
func (l *lobby) close() {
	l.mu.Lock()
	defer l.mu.Unlock()
	l.closed = true
	for c := range l.pending {
		c.Close()
	}
}

// admit accepts connections to the trial's socket until one says hello
// with the trial's token, and returns it; ok is false when the listener
// was closed first (the process ended). A connection whose first message
// is not such a hello is told why and closed, and the socket keeps
// waiting: a process that does not know the token cannot take the trial's
// place, nor make it fail. Connections are greeted concurrently, so one
// that says nothing delays no other. The listener is closed on return.
func (p *proc) admit() (a admitted, ok bool) {
	won := make(chan admitted, 1)
	acceptDone := make(chan struct{})
	go func() {
		defer close(acceptDone)
		for {
			c, err := p.ln.Accept()
			if err != nil {
				return
			}
			if !p.lobby.add(c) {
				c.Close()
				return
			}
			go func() {
				defer p.lobby.wg.Done()
				a, ok := p.greet(c)
				// Out of the lobby before it is handed over: closing the
				// lobby must not close the admitted connection.
				p.lobby.drop(c)
				if !ok {
					c.Close()
					return
				}
				select {
				case won <- a:
				default:
					c.Close() // another connection was admitted first
				}
			}()
		}
	}()
	select {
	case a = <-won:
		ok = true
	case <-acceptDone:
		// The listener was closed: wait for the connections accepted
		// before (whose hello may be in their buffers, from a trial that
		// has exited since); supervise closes them if they keep silent.
		p.lobby.wg.Wait()
		select {
		case a = <-won:
			ok = true
		default:
		}
	}
	p.ln.Close() // one connection per process
	<-acceptDone
	p.lobby.close()
	p.lobby.wg.Wait()
	select {
	case late := <-won: // admitted while a was returned
		late.conn.Close()
	default:
	}
	return a, ok
}

// greet reads the first message of c and reports whether it is a hello
// with the trial's token. Otherwise it tells c why it is refused.
func (p *proc) greet(c net.Conn) (admitted, bool) {
	_ = c.SetReadDeadline(time.Now().Add(helloTimeout))
	r := wire.NewReader(c)
	line, err := r.ReadLine()
	if err != nil {
		if err == wire.ErrTooLong {
			refuse(c, err)
		}
		return admitted{}, false
	}
	_ = c.SetReadDeadline(time.Time{})
	m, err := wire.Decode(line)
	switch {
	case err != nil:
	case m.Type != wire.TypeHello:
		err = fmt.Errorf("%s out of turn: the first message must be hello", m.Type)
	case subtle.ConstantTimeCompare([]byte(m.Token), []byte(p.token)) != 1:
		err = fmt.Errorf("hello: wrong token (use %s as it is)", wire.EnvToken)
	}
	if err != nil {
		refuse(c, err)
		return admitted{}, false
	}
	return admitted{conn: c, r: r, hello: line}, true
}

// refuse tells a connection that is not admitted why.
func refuse(c net.Conn, why error) {
	b, err := wire.Encode(wire.Message{Type: wire.TypeError, Message: why.Error()})
	if err != nil {
		return
	}
	_ = c.SetWriteDeadline(time.Now().Add(writeTimeout))
	_, _ = c.Write(b)
}
