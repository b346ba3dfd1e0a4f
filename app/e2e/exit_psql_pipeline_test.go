package e2e_test

import (
	"bufio"
	"encoding/base64"
	"encoding/csv"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/app/apptest"
	"github.com/idvault/idvault/app/apptest/exitpgtest"
	"github.com/idvault/idvault/app/exitclient/records"
	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/gen"
	"github.com/idvault/idvault/exit/pgtest"
)

// The exit tool guide's pipeline (exit/README.md, Records kept in a database), as written
// there: a PostgreSQL column of base64 ciphertexts goes out with psql's \copy, through
// `idvault exit decrypt-records` on standard input and output, and back into a table with
// \copy, over a gen-dump dump served from PostgreSQL. Every ciphertext that should decrypt
// arrives clear (checked against the manifest's SHA-256), the others keep their ciphertext and
// are reported with the manifest's error code, and NULL and ” stay as they were.
func TestPsqlCopyPipeline(t *testing.T) {
	t.Parallel()
	if testing.Short() {
		t.Skip("builds the binary and runs psql")
	}
	l, in := exitpgtest.ServedWithIdentities(t, gen.Options{Users: 8, Groups: 3, Resources: 40, DecoyApps: 1, Seed: 23}, 0)
	psql := pgtest.Bin(t, "psql")
	dir := t.TempDir()

	// The app's table: one row per manifest entry, the ciphertext as base64 text, plus NULL and ''.
	var rows [][]string
	want := map[string]dump.ManifestEntry{}
	for i, e := range l.Manifest {
		ct, err := os.ReadFile(filepath.Join(l.Dir, e.File))
		require.NoError(t, err)
		rows = append(rows, []string{strconv.Itoa(i + 1), e.File, base64.StdEncoding.EncodeToString(ct)})
		want[e.File] = e
	}
	seed := filepath.Join(dir, "seed.csv")
	f, err := os.Create(seed)
	require.NoError(t, err)
	w := csv.NewWriter(f)
	require.NoError(t, w.WriteAll(rows))
	require.NoError(t, f.Close())
	sql := func(q string) string {
		out, err := exec.Command(psql, l.DSN, "-v", "ON_ERROR_STOP=1", "-qAtc", q).CombinedOutput()
		require.NoError(t, err, "%s", out)
		return string(out)
	}
	sql(`CREATE TABLE messages (id int PRIMARY KEY, file text, body text); CREATE TABLE messages_clear (LIKE messages)`)
	sql(`\copy messages FROM '` + seed + `' WITH (FORMAT csv)`)
	sql(`INSERT INTO messages VALUES (1000, 'null', NULL), (1001, 'empty', '')`)

	script := `set -o pipefail
psql "$DB" -v ON_ERROR_STOP=1 -c "\copy (SELECT id, file, body FROM messages ORDER BY id) TO STDOUT WITH (FORMAT csv, HEADER)" \
  | idvault exit decrypt-records --url "$URL" --in - --out - --format csv --field body --clear-encoding base64 --errors errors.jsonl \
  | psql "$DB" -v ON_ERROR_STOP=1 -c "\copy messages_clear FROM STDIN WITH (FORMAT csv, HEADER)"
echo "status ${PIPESTATUS[*]}"`
	bin := apptest.Binary(t)
	cmd := exec.Command("bash", "-c", script)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "DB="+l.DSN, "URL="+in.URL, "IDVAULT_EXIT__TOKEN="+exitpgtest.Token,
		"PATH="+filepath.Dir(bin)+":"+filepath.Dir(psql)+":"+os.Getenv("PATH"))
	out, _ := cmd.CombinedOutput()
	require.Contains(t, string(out), "status 0 1 0", "psql, decrypt-records (some fields fail: exit 1), psql: %s", out)

	// Failures, by file.
	codes := map[string]string{}
	ef, err := os.Open(filepath.Join(dir, "errors.jsonl"))
	require.NoError(t, err)
	defer ef.Close()
	sc := bufio.NewScanner(ef)
	for sc.Scan() {
		var fe records.FieldError
		require.NoError(t, json.Unmarshal(sc.Bytes(), &fe))
		require.Equal(t, "body", fe.Field)
		codes[l.Manifest[fe.Record-1].File] = fe.Code
	}

	got := sql(`SELECT c.file, coalesce(encode(sha256(decode(c.body, 'base64')), 'hex'), 'NULL'), c.body = m.body
		FROM messages_clear c JOIN messages m USING (id) ORDER BY id`)
	lines := strings.Split(strings.TrimSpace(got), "\n")
	require.Len(t, lines, len(l.Manifest)+2, "every row came back")
	ok, failed := 0, 0
	for _, line := range lines[:len(l.Manifest)] {
		parts := strings.Split(line, "|")
		e := want[parts[0]]
		if e.Expected == "ok" {
			ok++
			require.Equal(t, e.SHA256, parts[1], "%s decrypted to its clear bytes", e.File)
			continue
		}
		require.Equal(t, "t", parts[2], "%s keeps its ciphertext", e.File)
		if e.ClearSize == 0 && codes[e.File] == "" {
			continue // an empty ciphertext is an empty field: it passes through
		}
		failed++
		require.Equal(t, e.Expected, codes[e.File], "%s is reported with the code POST /v1/decrypt gives", e.File)
	}
	require.Positive(t, ok)
	require.Positive(t, failed)
	require.Equal(t, "null|NULL|\nempty|e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855|t", strings.Join(lines[len(l.Manifest):], "\n"), "NULL stays NULL, '' stays ''")
}
