package exitserver

import (
	"net"
	"sync"
	"sync/atomic"
	"time"

	"github.com/valyala/fasthttp"

	"github.com/idvault/idvault/app/netguard"
)

// A decrypt stream is written on its hijacked connection; when it ended well and the client
// keeps its connection (HTTP/1.1 without Connection: close), the connection goes back to the
// HTTP server for the next request instead of being closed: a client decrypting file after
// file (exitclient, a benchmark's 20 streams in a row) then pays neither a new TCP handshake
// nor a new connection's small receive window for each. Only Serve's connections (netguard)
// are kept: the header time limit closes one the client leaves idle without an answer.

// keptConns are the connections handed back to the HTTP server after a stream, until their
// next request is answered (the server's ConnState hook removes them then: fasthttp counts
// them as idle from there). Waiting for that request, fasthttp does not know them as idle
// (it marks one active before its first byte), so Shutdown cuts those itself.
type keptConns struct {
	mu      sync.Mutex
	closing bool
	conns   map[net.Conn]struct{}
	n       atomic.Int32 // len(conns), read without the lock on every request's state change
}

// add registers c, unless the server is shutting down.
func (k *keptConns) add(c net.Conn) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	if k.closing {
		return false
	}
	if k.conns == nil {
		k.conns = make(map[net.Conn]struct{})
	}
	k.conns[c] = struct{}{}
	k.n.Store(int32(len(k.conns)))
	return true
}

func (k *keptConns) remove(c net.Conn) {
	if k.n.Load() == 0 {
		return
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	delete(k.conns, c)
	k.n.Store(int32(len(k.conns)))
}

// closeAll refuses later additions and closes those kept that have not received a byte of a
// request: the HTTP server's wait for their headers ends at once, without an answer (a spare
// connection). A request under way is left to finish. They are closed rather than given a past
// read deadline: the HTTP server sets its own deadline when it starts reading a connection, and
// one handed back just before Shutdown could have its past deadline replaced by the header
// limit, which Shutdown would then wait for.
func (k *keptConns) closeAll() {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.closing = true
	for c := range k.conns {
		if netguard.ReadNothing(c) {
			_ = c.Close()
		}
	}
}

// keepable reports whether a stream's connection can be kept: one of Serve's.
func keepable(raw net.Conn) bool {
	_, ok := raw.(*netguard.Conn)
	return ok
}

// trackKept is the part of the server's ConnState hook for kept connections: once a request
// was answered on one (idle), or it closed or was hijacked again, the HTTP server has it.
func (s *Server) trackKept(c net.Conn, st fasthttp.ConnState) {
	if st == fasthttp.StateIdle || st == fasthttp.StateClosed || st == fasthttp.StateHijacked {
		s.kept.remove(c)
	}
}

// serveAgain hands raw, whose stream ended well, back to the HTTP server and serves its next
// requests until it closes or is hijacked again; it reports false (the caller closes raw) when
// the connection cannot be kept. hj is the hijacked connection, which reads first what the
// HTTP server had buffered: bytes there are a request the client sent before this answer
// ended (pipelined, which clients must not do after a POST), which a new reader of raw would
// miss, so that connection is closed. raw must be keepable.
func (s *Server) serveAgain(raw, hj net.Conn) bool {
	_ = raw.SetReadDeadline(time.Now()) // a read of hj can only return buffered bytes
	var b [1]byte
	if n, _ := hj.Read(b[:]); n > 0 {
		return false
	}
	netguard.AwaitRequest(raw)
	_ = raw.SetReadDeadline(time.Now().Add(s.cfg.HeaderTimeout))
	if !s.kept.add(raw) {
		return false
	}
	_ = s.App.Server().ServeConn(raw) // it closes raw when it is done with it
	return true
}
