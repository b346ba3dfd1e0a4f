package mailtest

import (
	"time"

	"github.com/emersion/go-smtp"
)

// Stage is a point in the SMTP session where a fault can be injected.
type Stage string

// Injection points.
const (
	// AtConnect: right after the TCP accept, before the greeting.
	AtConnect Stage = "connect"
	// AtHelo: at EHLO/HELO (again after STARTTLS, which restarts the session).
	AtHelo Stage = "helo"
	// AtAuth: when the AUTH PLAIN credentials arrive.
	AtAuth Stage = "auth"
	// AtMail: at MAIL FROM.
	AtMail Stage = "mail"
	// AtRcpt: at RCPT TO.
	AtRcpt Stage = "rcpt"
	// AtData: after the message content was received, before the final reply to DATA.
	AtData Stage = "data"
)

// Action is what an injected fault does.
type Action int

// Fault actions.
const (
	// Reply answers with Fault.Code (e.g. 451, 550, 554) instead of accepting.
	Reply Action = iota
	// Stall says nothing for Fault.Duration (0: until the server is closed), then carries on.
	Stall
	// Drop closes the TCP connection without a reply.
	Drop
)

// Fault is an injected failure.
type Fault struct {
	// At is where the fault strikes.
	At Stage
	// Action is what it does.
	Action Action
	// Code is the SMTP reply code for Reply.
	Code int
	// Duration is how long Stall lasts; 0 means until the server is closed.
	Duration time.Duration
	// Times limits the fault to its next Times occurrences; 0 means every time.
	Times int
}

// SetFault installs f for f.At, replacing any fault already set there.
func (s *Server) SetFault(f Fault) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.faults[f.At] = &f
}

// ClearFaults removes all faults.
func (s *Server) ClearFaults() {
	s.mu.Lock()
	defer s.mu.Unlock()
	clear(s.faults)
}

// trigger returns the fault to apply at stage, consuming one of its Times.
func (s *Server) trigger(at Stage) *Fault {
	s.mu.Lock()
	defer s.mu.Unlock()
	f, ok := s.faults[at]
	if !ok {
		return nil
	}
	applied := *f
	if f.Times > 0 {
		f.Times--
		if f.Times == 0 {
			delete(s.faults, at)
		}
	}
	return &applied
}

// inject applies the fault set for stage, if any, and returns the error the handler must
// return (nil to carry on).
func (s *Server) inject(at Stage, c *smtp.Conn) error {
	f := s.trigger(at)
	if f == nil {
		return nil
	}
	switch f.Action {
	case Stall:
		s.stall(f)
		return nil
	case Drop:
		_ = c.Conn().Close()
		return errDropped
	default:
		return &smtp.SMTPError{
			Code:         f.Code,
			EnhancedCode: smtp.EnhancedCode{f.Code / 100, 0, 0},
			Message:      "mailtest: injected failure",
		}
	}
}

func (s *Server) stall(f *Fault) {
	if f.Duration <= 0 {
		<-s.stop
		return
	}
	t := time.NewTimer(f.Duration)
	defer t.Stop()
	select {
	case <-t.C:
	case <-s.stop:
	}
}
