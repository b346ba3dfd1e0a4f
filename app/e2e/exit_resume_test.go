package e2e_test

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/exitpgtest"
	"github.com/idvault/idvault/app/exitclient/outfiles"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
)

// slowProxy forwards loopback connections to target, the answers at about rate bytes/s, so
// that a client run lasts long enough to be killed midway.
func slowProxy(t *testing.T, target string, rate int) string {
	t.Helper()
	return apptest.ServeTCP(t, func(c net.Conn) {
		defer c.Close()
		s, err := net.Dial("tcp", target)
		if err != nil {
			return
		}
		defer s.Close()
		go func() { _, _ = io.Copy(s, c); s.(*net.TCPConn).CloseWrite() }()
		buf := make([]byte, 16<<10)
		for {
			n, err := s.Read(buf)
			if n > 0 {
				if _, werr := c.Write(buf[:n]); werr != nil {
					return
				}
				time.Sleep(time.Duration(n) * time.Second / time.Duration(rate))
			}
			if err != nil {
				return
			}
		}
	})
}

// The real binary's `exit decrypt` through a server on the real database, killed midway,
// leaves only whole files under final names; a rerun skips them and finishes the tree, every
// ok entry of the manifest to its SHA-256.
func TestBulkClientKilledAndResumed(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	l, in := exitpgtest.ServedWithIdentities(t, gen.Options{Users: 8, Groups: 2, Resources: 30, Big: 6, Seed: 12}, 0)
	url := "http://" + slowProxy(t, strings.TrimPrefix(in.URL, "http://"), 16<<20)

	out := filepath.Join(t.TempDir(), "clear")
	env := append(os.Environ(), "IDVAULT_EXIT__TOKEN="+exitpgtest.Token)
	cmd := exec.Command(apptest.Binary(t), "exit", "decrypt", "--url", url, "--in", filepath.Join(l.Dir, "data"), "--out", out, "--jobs", "1")
	cmd.Env = env
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	finals := func() int {
		n := 0
		_ = filepath.WalkDir(out, func(_ string, d os.DirEntry, err error) error {
			if err == nil && d.Type().IsRegular() && !strings.HasSuffix(d.Name(), outfiles.PartSuffix) {
				n++
			}
			return nil
		})
		return n
	}
	for deadline := time.Now().Add(60 * time.Second); finals() < 3 && time.Now().Before(deadline); {
		time.Sleep(2 * time.Millisecond)
	}
	require.NoError(t, cmd.Process.Kill())
	_ = cmd.Wait()
	killedAt := finals()
	ok := 0
	for _, e := range l.Manifest {
		if e.Expected == dump.ExpectOK {
			ok++
		}
	}
	require.Less(t, killedAt, ok, "killed before the end: %s", stderr.String())

	check := func(requireAll bool) {
		for _, e := range l.Manifest {
			raw, err := os.ReadFile(filepath.Join(out, strings.TrimPrefix(e.File, "data/")))
			if os.IsNotExist(err) && !requireAll {
				continue
			}
			if e.Expected != dump.ExpectOK {
				require.True(t, os.IsNotExist(err), "%s failed and left no file", e.File)
				continue
			}
			require.NoError(t, err, e.File)
			sum := sha256.Sum256(raw)
			require.Equal(t, e.SHA256, hex.EncodeToString(sum[:]), "%s is whole, never partial", e.File)
		}
	}
	check(false)

	rerun := exec.Command(apptest.Binary(t), "exit", "decrypt", "--url", in.URL, "--in", filepath.Join(l.Dir, "data"), "--out", out)
	rerun.Env = env
	var o, e bytes.Buffer
	rerun.Stdout, rerun.Stderr = &o, &e
	err := rerun.Run()
	require.Error(t, err, "the dump's negative cases fail, so the exit code is not 0")
	require.Contains(t, e.String(), strconv.Itoa(killedAt)+" already done", "%s", e.String())
	check(true)
}
