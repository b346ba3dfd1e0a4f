package mail_test

import (
	"bufio"
	"context"
	"net"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/mail"
)

// endlessReplyServer accepts one connection on loopback and answers normally until the command
// that starts with endlessAt ("" for the greeting), to which it streams a multi-line reply that
// never ends (at most 256 MiB, or until the client hangs up).
func endlessReplyServer(t *testing.T, endlessAt string) (host string, port int) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	t.Cleanup(func() { _ = ln.Close() })
	go func() {
		c, err := ln.Accept()
		if err != nil {
			return
		}
		defer c.Close()
		r, w := bufio.NewReader(c), bufio.NewWriterSize(c, 1<<16)
		endless := func() {
			line := "250-" + strings.Repeat("A", 1000) + "\r\n"
			for i := 0; i < 256<<10; i++ {
				if _, err := w.WriteString(line); err != nil {
					return
				}
			}
		}
		switch endlessAt {
		case "":
			endless()
			return
		case "long greeting line":
			_, _ = w.WriteString("554 " + strings.Repeat("A", 100<<10) + "\r\n")
			_ = w.Flush()
			return
		}
		_, _ = w.WriteString("220 endless.test ESMTP\r\n")
		_ = w.Flush()
		for {
			cmd, err := r.ReadString('\n')
			if err != nil {
				return
			}
			if strings.HasPrefix(strings.ToUpper(cmd), endlessAt) {
				endless()
				return
			}
			switch {
			case strings.HasPrefix(cmd, "EHLO"):
				_, _ = w.WriteString("250-endless.test\r\n250 8BITMIME\r\n")
			case strings.HasPrefix(cmd, "QUIT"):
				_, _ = w.WriteString("221 bye\r\n")
			default:
				_, _ = w.WriteString("250 ok\r\n")
			}
			_ = w.Flush()
		}
	}()
	return "127.0.0.1", ln.Addr().(*net.TCPAddr).Port
}

// A server (or, before STARTTLS, anyone on the path) that streams a reply without end is cut
// off after 256 KiB, with an error naming the stage. Before, go-mail's reply reader kept every
// line until the send timed out: 3 s of it held 700 MB, and the default 15 s timeout several
// gigabytes, enough to get idvault killed.
func TestEndlessReplyIsCutOff(t *testing.T) {
	cases := []struct {
		name, at, stage string
	}{
		{"greeting", "", mail.StageConnect},
		{"a 100 KiB greeting line", "long greeting line", mail.StageConnect},
		{"EHLO", "EHLO", mail.StageConnect},
		{"MAIL FROM", "MAIL", mail.StageMailFrom},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			host, port := endlessReplyServer(t, tc.at)
			s, logs := newSender(t, mail.Config{Host: host, Port: port, TLS: mail.TLSNone,
				From: "no-reply@idvault.test", HELO: "idvault.test", Timeout: 10 * time.Second})
			var before, after runtime.MemStats
			runtime.ReadMemStats(&before)
			err := s.Send(context.Background(), codeMessage())
			runtime.ReadMemStats(&after)
			require.Error(t, err)
			require.Equal(t, tc.stage, mail.Stage(err), "error: %.300s", err)
			if tc.at != "long greeting line" {
				require.True(t, mail.IsTemporary(err))
			}
			require.Less(t, after.TotalAlloc-before.TotalAlloc, uint64(64<<20), "bytes allocated by the send")
			t.Logf("%.600s", err)
			require.Less(t, len(err.Error()), 1000, "the server's reply is not copied whole into the error")
			requireNoSecrets(t, err.Error()+logs.String())
		})
	}
}
