package mail_test

import (
	"bufio"
	"context"
	"encoding/base64"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail"
)

// echoAuthServer is an SMTP server that refuses AUTH by quoting the line it got, as some do:
// that line holds the password in base64. It serves connections until the test ends.
func echoAuthServer(t *testing.T) net.Listener {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			go func() {
				defer func() { _ = c.Close() }()
				_ = c.SetDeadline(time.Now().Add(10 * time.Second))
				_, _ = c.Write([]byte("220 echo ESMTP\r\n"))
				r := bufio.NewReader(c)
				for {
					line, err := r.ReadString('\n')
					if err != nil {
						return
					}
					line = strings.TrimSpace(line)
					reply := "250 ok"
					switch verb := strings.ToUpper(strings.Fields(line + " x")[0]); verb {
					case "EHLO":
						reply = "250-echo\r\n250 AUTH PLAIN LOGIN"
					case "AUTH":
						reply = "535 5.7.8 authentication failed for " + line
					case "QUIT":
						_, _ = c.Write([]byte("221 bye\r\n"))
						return
					}
					_, _ = c.Write([]byte(reply + "\r\n"))
				}
			}()
		}
	}()
	return ln
}

// A server that quotes the refused AUTH line never gets the password into an error or a log:
// only the reply code and the enhanced status code are kept.
func TestAuthReplyNeverCarriesThePassword(t *testing.T) {
	t.Parallel()
	ln := echoAuthServer(t)
	addr := ln.Addr().(*net.TCPAddr)
	const pass = "smtp-secret-pass"
	cfg := mail.Config{Host: "127.0.0.1", Port: addr.Port, TLS: mail.TLSNone, From: "no-reply@idvault.test",
		HELO: "idvault.test", Timeout: 5 * time.Second, PoolSize: 1, Username: "idv", Password: pass}
	s, logs := newSender(t, cfg)
	sendErr := s.Send(context.Background(), codeMessage())
	checkErr := s.Check(context.Background())
	for _, err := range []error{sendErr, checkErr} {
		require.Error(t, err)
		require.Equal(t, mail.StageAuth, mail.Stage(err))
		require.Contains(t, err.Error(), "535 5.7.8")
		require.NotContains(t, err.Error(), "AUTH PLAIN")
	}
	plain := base64.StdEncoding.EncodeToString([]byte("\x00idv\x00" + pass))
	for _, out := range []string{sendErr.Error(), checkErr.Error(), logs.String()} {
		require.NotContains(t, out, pass)
		require.NotContains(t, out, plain)
	}
}
