package e2e_test

import (
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// The exit tool guide's walkthrough (exit/README.md), as a new user pastes it from a clone
// (runGuideBlock).
func TestExitGuideWalkthrough(t *testing.T) {
	t.Parallel()
	block := guideBlock(t, exitWalkthroughMarker)
	require.Contains(t, block, `eval "$(make -s pg)"`)
	run := runGuideBlock(t, block)
	text, dir, listen, pgDir := run.text, run.dir, run.listen, run.pgDir

	require.Contains(t, text, "dump dump loaded: 3 files")
	require.Contains(t, text, "exit 1: the dump's negative cases fail on purpose")
	m := regexp.MustCompile(`(\d+) identities: (\d+) imported, 0 already imported, 0 refused`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	require.Equal(t, m[1], m[2])
	m = regexp.MustCompile(`(\d+) ciphertexts \+ (\d+) negative cases`).FindStringSubmatch(text)
	require.NotNil(t, m, text)
	entries, err := os.ReadDir(filepath.Join(dir, "clear"))
	require.NoError(t, err)
	require.Equal(t, m[1], strconv.Itoa(len(entries)), "every ciphertext decrypted:\n%s", text)
	require.Equal(t, strings.Count(text, "\tkey_not_found\t")+strings.Count(text, "\tdecryption_failed\t")+
		strings.Count(text, "\tunsupported_format\t")+strings.Count(text, "\ttruncated_data\t"), mustAtoi(t, m[2]), "every negative case failed, by name:\n%s", text)
	// The decrypted tree was checked by sha256sum against every expected file.
	require.Contains(t, text, "every expected clear file is there, byte for byte")
	sums, err := os.ReadFile(filepath.Join(dir, "dump", "SHA256SUMS"))
	require.NoError(t, err)
	require.Equal(t, m[1], strconv.Itoa(strings.Count(string(sums), "\n")), "SHA256SUMS lists every ciphertext's clear file")
	require.NotContains(t, text, "import the identity of user", "every identity is imported: key_not_found names nobody to import")
	// The server it started is stopped, and forget said what it deleted.
	conn, err := net.DialTimeout("tcp", listen, time.Second)
	if err == nil {
		conn.Close()
		t.Fatal("the exit server is still listening after the walkthrough")
	}
	require.Regexp(t, `exit_user_keys: [1-9]\d* rows`, text, "forget said what it deleted")
	_, err = os.Stat(pgDir)
	require.ErrorIs(t, err, os.ErrNotExist, "make pg-stop removed the cluster")
}

func mustAtoi(t *testing.T, s string) int {
	n, err := strconv.Atoi(s)
	require.NoError(t, err)
	return n
}

// exit/README.md's decrypt-table walkthrough, as a user pastes it (runGuideBlock).
func TestTableWalkthrough(t *testing.T) {
	t.Parallel()
	text := runGuideBlock(t, guideBlock(t, tableWalkthroughMarker)).text
	require.Contains(t, text, "exit 1: the dump's negative cases fail on purpose")
	require.Contains(t, text, "every clear value is there, byte for byte")
	require.Contains(t, text, "decryption_failed")
	require.Contains(t, text, "key_not_found")
	require.Contains(t, text, `"rows_this_run":0`)
	require.Contains(t, text, `"resumed":true`)
}
