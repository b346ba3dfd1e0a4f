package gen_test

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/idvault/idvault/exit/dump"
	"github.com/idvault/idvault/exit/dump/dumptest"
	"github.com/idvault/idvault/exit/dump/gen"
)

func TestMain(m *testing.M) { dumptest.Main(m) }

var tinyOptions = gen.Options{Users: 3, Groups: 1, Resources: 4, Big: 0, Seed: 3, WriteKeys: true}

// Every file of a dump is readable by its owner only, every directory it creates too: the dump
// holds the app secret, private identities, Tanker's private keys and digests of clear data.
func TestGeneratedFilesAreOwnerOnly(t *testing.T) {
	d := dumptest.Shared(t)
	n := 0
	require.NoError(t, filepath.WalkDir(d.Dir, func(p string, e fs.DirEntry, err error) error {
		require.NoError(t, err)
		info, err := e.Info()
		require.NoError(t, err)
		want := gen.FileMode
		if e.IsDir() {
			if p == d.Dir {
				return nil // made by MkdirTemp in dumptest
			}
			want = gen.DirMode
		}
		require.Equal(t, want, info.Mode().Perm(), "%s", p)
		n++
		return nil
	}))
	require.Greater(t, n, 100)
	for _, name := range []string{dump.AppFile, dump.IdentitiesFile, dump.DataFile, dump.ManifestFile, dump.SumsFile, dump.KeysFile} {
		st, err := os.Lstat(filepath.Join(d.Dir, name))
		require.NoError(t, err, name)
		require.Equal(t, fs.FileMode(0o600), st.Mode().Perm(), name)
	}
}

// A link planted at any name the dump will hold is refused, never written through: the link's
// target stays as it was, and the run leaves nothing of its own behind.
func TestGenerateRefusesPlantedLinks(t *testing.T) {
	for _, name := range []string{dump.AppFile, dump.IdentitiesFile, dump.DataFile, dump.ManifestFile,
		dump.SumsFile, dump.KeysFile, dump.DataDir, dump.IndexesFile} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			elsewhere := t.TempDir()
			target := filepath.Join(elsewhere, "victim")
			require.NoError(t, os.WriteFile(target, []byte("untouched"), 0o644))
			if name == dump.DataDir {
				target = elsewhere
			}
			require.NoError(t, os.Symlink(target, filepath.Join(dir, name)))

			_, err := gen.Generate(context.Background(), dir, tinyOptions)
			require.ErrorContains(t, err, "already exists")
			require.ErrorContains(t, err, name)

			got, err := os.ReadFile(filepath.Join(elsewhere, "victim"))
			require.NoError(t, err)
			require.Equal(t, "untouched", string(got))
			entries, err := os.ReadDir(elsewhere)
			require.NoError(t, err)
			require.Len(t, entries, 1, "nothing written into the link's directory")
			entries, err = os.ReadDir(dir)
			require.NoError(t, err)
			require.Len(t, entries, 1, "only the planted link is left: %v", entries)
		})
	}
}

// A run that fails midway (here: cancelled) removes every file it created and nothing else.
func TestGenerateFailureRemovesWhatItCreated(t *testing.T) {
	dir := t.TempDir()
	require.NoError(t, os.WriteFile(filepath.Join(dir, "notes.txt"), []byte("mine"), 0o644))
	ctx, cancel := context.WithCancel(context.Background())
	opts := tinyOptions
	opts.Progress = func(stage string, done, total int64) {
		if strings.HasPrefix(stage, "resources") && done > 0 {
			cancel()
		}
	}
	_, err := gen.Generate(ctx, dir, opts)
	require.ErrorIs(t, err, context.Canceled)
	entries, err := os.ReadDir(dir)
	require.NoError(t, err)
	require.Len(t, entries, 1)
	require.Equal(t, "notes.txt", entries[0].Name())

	// The same directory then takes a complete dump.
	_, err = gen.Generate(context.Background(), dir, tinyOptions)
	require.NoError(t, err)
}

// SHA256SUMS lists exactly the ok entries of the manifest, in sha256sum's format, with paths
// relative to data/ (the tree decrypt writes), and each digest is the one of the clear file.
func TestSumsFileListsTheExpectedClearFiles(t *testing.T) {
	d := dumptest.Shared(t)
	f, err := os.Open(filepath.Join(d.Dir, dump.SumsFile))
	require.NoError(t, err)
	defer f.Close()
	sums := map[string]string{}
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		sum, name, ok := strings.Cut(sc.Text(), "  ")
		require.True(t, ok, "line %q", sc.Text())
		require.Len(t, sum, 64)
		sums[name] = sum
	}
	require.NoError(t, sc.Err())
	keys, err := dump.ReadKeys(d.Dir)
	require.NoError(t, err)
	keyOf := map[string]string{}
	for _, k := range keys {
		keyOf[k.File] = k.Key
	}
	ok := 0
	for _, e := range d.Manifest {
		name := strings.TrimPrefix(e.File, dump.DataDir+"/")
		if e.Expected != dump.ExpectOK {
			require.NotContains(t, sums, name)
			continue
		}
		ok++
		require.Equal(t, e.SHA256, sums[name], name)
		if e.ClearSize > 1<<20 {
			continue // the big ones are checked by the manifest tests
		}
		ct, err := os.ReadFile(filepath.Join(d.Dir, e.File))
		require.NoError(t, err)
		clear, err := dump.DecryptWithDataKey(dumptest.Base64(t, keyOf[e.File]), ct)
		require.NoError(t, err, name)
		h := sha256.Sum256(clear)
		require.Equal(t, hex.EncodeToString(h[:]), sums[name], name)
	}
	require.Len(t, sums, ok)
}
