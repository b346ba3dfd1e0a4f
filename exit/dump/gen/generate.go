package gen

import (
	"bufio"
	"context"
	"crypto/ed25519"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/idvault/idvault/app/identity"
	"github.com/idvault/idvault/exit/block"
	"github.com/idvault/idvault/exit/dump"
)

// epoch is the creation time of every root block; other rows follow it.
var epoch = time.Date(2024, 1, 2, 9, 0, 0, 0, time.UTC)

// app is one trustchain being generated: the main app or a decoy.
type app struct {
	index    int    // 0 for the main app, k for decoy k
	label    string // "main" or "decoyK", mixed into every item's random source
	id       block.Hash
	secret   ed25519.PrivateKey
	main     bool // writes identities, data files and the manifest
	domain   string
	users    int
	groups   int
	provs    int
	res      int
	withheld int // provisional identity kept out of identities.jsonl (-1: none)

	userRecs, provRecs, groupRecs *records
}

// gen holds the state of one Generate call.
type gen struct {
	opts   Options
	dir    string
	tmp    string
	main   *app
	decoys []*app

	tableFiles [numTables]*os.File
	tableBufs  [numTables]*bufio.Writer
	identities *bufio.Writer
	manifest   *bufio.Writer
	keys       *bufio.Writer
	sums       *bufio.Writer
	closers    []io.Closer
	created    []string // files of the dump directory created by this run
	dataDir    string   // data/, once created by this run
	sum        Summary
}

// Generate writes a dump into dir (created if missing): the three SQL files, app.json,
// identities.jsonl, manifest.jsonl, SHA256SUMS and data/. Every file is created new with
// FileMode (0600; a name that already exists, a symbolic link included, is refused, never
// written through), and a run that fails removes what it created. The work is
// spread over Workers goroutines; memory stays flat whatever the counts, as rows go to
// per-table temporary files that are concatenated at the end and the keys later items
// need are kept in record files.
func Generate(ctx context.Context, dir string, opts Options) (Summary, error) {
	if err := opts.normalize(); err != nil {
		return Summary{}, err
	}
	if opts.Workers <= 0 {
		opts.Workers = runtime.GOMAXPROCS(0)
	}
	g := &gen{opts: opts, dir: dir}
	g.sum.Rows = map[string]int{}
	g.sum.Natures = map[int]int{}
	err := g.prepare()
	if err == nil {
		err = g.run(ctx)
	}
	g.cleanup(err != nil)
	if err != nil {
		return Summary{}, err
	}
	return g.sum, nil
}

func (g *gen) prepare() error {
	if _, err := os.Lstat(filepath.Join(g.dir, dump.SchemaFile)); err == nil {
		return fmt.Errorf("dump: %s already holds a dump", g.dir)
	}
	if err := os.MkdirAll(g.dir, DirMode); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	// Every name is checked before anything is written, so that a directory holding one of
	// them is refused untouched; each file is still created new (createNew) in case one
	// appears meanwhile.
	for _, name := range outputNames(g.opts.WriteKeys) {
		if _, err := os.Lstat(filepath.Join(g.dir, name)); err == nil {
			return existsError(filepath.Join(g.dir, name), fs.ErrExist)
		}
	}
	data := filepath.Join(g.dir, dump.DataDir)
	if err := os.Mkdir(data, DirMode); err != nil {
		return existsError(data, err)
	}
	g.dataDir = data
	tmp, err := os.MkdirTemp(g.dir, ".gen-")
	if err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	g.tmp = tmp
	for t := range tables {
		f, err := createNew(filepath.Join(tmp, tables[t].name))
		if err != nil {
			return err
		}
		g.tableFiles[t] = f
		g.tableBufs[t] = bufio.NewWriterSize(f, 1<<20)
	}
	open := func(name string) (*bufio.Writer, error) {
		path := filepath.Join(g.dir, name)
		f, err := createNew(path)
		if err != nil {
			return nil, err
		}
		g.created = append(g.created, path)
		g.closers = append(g.closers, f)
		return bufio.NewWriterSize(f, 256<<10), nil
	}
	if g.identities, err = open(dump.IdentitiesFile); err != nil {
		return err
	}
	if g.manifest, err = open(dump.ManifestFile); err != nil {
		return err
	}
	if g.sums, err = open(dump.SumsFile); err != nil {
		return err
	}
	if g.opts.WriteKeys {
		if g.keys, err = open(dump.KeysFile); err != nil {
			return err
		}
	}
	return nil
}

// cleanup closes and removes the temporary files; after a failure it also removes every file
// and directory this run created (and only those), so that the directory is as it was.
func (g *gen) cleanup(failed bool) {
	for _, f := range g.tableFiles {
		if f != nil {
			_ = f.Close()
		}
	}
	for _, c := range g.closers {
		_ = c.Close()
	}
	for _, a := range append([]*app{g.main}, g.decoys...) {
		if a == nil {
			continue
		}
		for _, r := range []*records{a.userRecs, a.provRecs, a.groupRecs} {
			if r != nil {
				r.close()
			}
		}
	}
	if g.tmp != "" {
		_ = os.RemoveAll(g.tmp)
	}
	if failed {
		for _, p := range g.created {
			_ = os.Remove(p)
		}
		if g.dataDir != "" {
			_ = os.RemoveAll(g.dataDir)
		}
	}
}

// newApp sets up an app from its secret and writes its trustchains row.
func (g *gen) newApp(index int, secret []byte) (*app, error) {
	o := g.opts
	a := &app{index: index, secret: ed25519.PrivateKey(secret), main: index == 0, withheld: -1}
	if a.main {
		a.label, a.domain = "main", "example.com"
		a.users, a.groups, a.provs, a.res = o.Users, o.Groups, o.Provisional, o.Resources
		a.withheld = a.provs - 1
	} else {
		a.label, a.domain = fmt.Sprintf("decoy%d", index), fmt.Sprintf("decoy%d.example.net", index)
		a.users = clamp(o.Users/10, 2, 1000)
		a.groups = clamp(o.Groups/10, 1, 100)
		a.provs = clamp(o.Provisional/10, 2, 100)
		a.res = clamp(o.Resources/10, 2, 1000)
	}
	rootAction := &block.TrustchainCreationAction{}
	copy(rootAction.PublicSignatureKey[:], secret[32:])
	root := block.New(block.Hash{}, rootAction, block.Hash{}) // zero author, zero signature
	a.id = root.Hash()
	root.TrustchainID = a.id
	if appID, err := identity.AppIDFromSecret(secret); err != nil || block.Hash(appID) != a.id {
		return nil, fmt.Errorf("dump: app ID of the root block differs from the identity library's (%v)", err)
	}
	var err error
	if a.userRecs, err = newRecords(g.tmp, a.label+"-users", userRecSize); err != nil {
		return nil, err
	}
	if a.provRecs, err = newRecords(g.tmp, a.label+"-provs", provRecSize); err != nil {
		return nil, err
	}
	if a.groupRecs, err = newRecords(g.tmp, a.label+"-groups", groupRecSize); err != nil {
		return nil, err
	}
	var s sink
	s.add(tTrustchains, s.rowFor(tTrustchains).bytea(a.id[:]).bytea(secret[32:]).bytea(root.Serialize()).
		timestamp(epoch.Add(time.Duration(index)*time.Hour)).end())
	return a, g.write(&s)
}

func clamp(v, lo, hi int) int { return max(lo, min(v, hi)) }

func (g *gen) run(ctx context.Context) error {
	secret := g.opts.AppSecret
	if secret == nil {
		var err error
		if _, secret, err = identity.GenerateApp(itemRNG(g.opts.Seed, "app", 0)); err != nil {
			return fmt.Errorf("dump: %w", err)
		}
	}
	var err error
	if g.main, err = g.newApp(0, secret); err != nil {
		return err
	}
	g.sum.AppID = append([]byte(nil), g.main.id[:]...)
	for k := 1; k <= g.opts.DecoyApps; k++ {
		_, s, err := identity.GenerateApp(itemRNG(g.opts.Seed, "decoy-app", k))
		if err != nil {
			return fmt.Errorf("dump: %w", err)
		}
		d, err := g.newApp(k, s)
		if err != nil {
			return err
		}
		g.decoys = append(g.decoys, d)
		g.sum.DecoyIDs = append(g.sum.DecoyIDs, append([]byte(nil), d.id[:]...))
	}
	// Decoys first: the main app's resources plant rows in them.
	for _, a := range append(append([]*app{}, g.decoys...), g.main) {
		if err := g.phase(ctx, a, "users", a.users, 64, g.userItem); err != nil {
			return err
		}
		if err := g.phase(ctx, a, "provisional identities", a.provs, 64, g.provItem); err != nil {
			return err
		}
		if err := g.phase(ctx, a, "groups", a.groups, 16, g.groupItem); err != nil {
			return err
		}
		if err := g.phase(ctx, a, "resources", a.res, 32, g.resourceItem); err != nil {
			return err
		}
	}
	if err := g.phase(ctx, g.main, "big resources", g.opts.Big, 1, g.bigItem); err != nil {
		return err
	}
	if err := g.phase(ctx, g.main, "provisional-only resources", g.opts.ProvisionalOnly, 32, g.provisionalOnlyItem); err != nil {
		return err
	}
	if err := g.phase(ctx, g.main, "negative cases", len(g.negatives()), 1, g.negativeItem); err != nil {
		return err
	}
	return g.finish()
}

// phase makes n items of one kind for app a.
func (g *gen) phase(ctx context.Context, a *app, stage string, n, chunk int, item func(a *app, i int, s *sink) error) error {
	if a != g.main {
		stage = a.label + " " + stage
	}
	g.progress(stage, 0, int64(n))
	err := runItems(ctx, g.opts.Workers, n, chunk, func(i int, s *sink) error { return item(a, i, s) },
		func(s *sink, done int) error {
			if err := g.write(s); err != nil {
				return err
			}
			g.progress(stage, int64(done), int64(n))
			return nil
		})
	if err != nil {
		return fmt.Errorf("dump: %s: %w", stage, err)
	}
	return nil
}

func (g *gen) progress(stage string, done, total int64) {
	if g.opts.Progress != nil {
		g.opts.Progress(stage, done, total)
	}
}

// write appends a sink's output to the dump.
func (g *gen) write(s *sink) error {
	for t := range tables {
		if len(s.rows[t]) == 0 {
			continue
		}
		if _, err := g.tableBufs[t].Write(s.rows[t]); err != nil {
			return fmt.Errorf("dump: %w", err)
		}
		g.sum.Rows[tables[t].name] += s.counts[t]
	}
	for n, c := range s.natures {
		g.sum.Natures[n] += c
	}
	g.sum.Resources += s.resources
	g.sum.Negatives += s.negatives
	if len(s.identities) > 0 {
		if _, err := g.identities.Write(s.identities); err != nil {
			return fmt.Errorf("dump: %w", err)
		}
		g.sum.Identities += countLines(s.identities)
	}
	if _, err := g.manifest.Write(s.manifest); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	if g.keys != nil {
		if _, err := g.keys.Write(s.keys); err != nil {
			return fmt.Errorf("dump: %w", err)
		}
	}
	if _, err := g.sums.Write(s.sums); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return nil
}

func countLines(b []byte) int {
	n := 0
	for _, c := range b {
		if c == '\n' {
			n++
		}
	}
	return n
}

// finish flushes and syncs the streamed files, then writes app.json and the SQL files (data
// last but one), each complete in the private temporary directory before it gets its name.
func (g *gen) finish() error {
	for _, w := range []*bufio.Writer{g.identities, g.manifest, g.sums, g.keys} {
		if w != nil {
			if err := w.Flush(); err != nil {
				return fmt.Errorf("dump: %w", err)
			}
		}
	}
	for _, c := range g.closers {
		if f, ok := c.(*os.File); ok {
			if err := f.Sync(); err != nil {
				return fmt.Errorf("dump: %w", err)
			}
		}
	}
	appJSON, err := json.MarshalIndent(g.appInfo(), "", "  ")
	if err != nil {
		return err
	}
	if err := g.writeFile(dump.AppFile, append(appJSON, '\n')); err != nil {
		return err
	}
	if err := g.writeFile(dump.SchemaFile, []byte(dump.SchemaSQL)); err != nil {
		return err
	}
	if err := g.writeData(); err != nil {
		return err
	}
	return g.writeFile(dump.IndexesFile, []byte(dump.IndexesSQL))
}

// writeFile writes a small file of the dump: in the temporary directory, then published.
func (g *gen) writeFile(name string, data []byte) error {
	tmp := filepath.Join(g.tmp, name)
	if err := writeNew(tmp, data, true); err != nil {
		return err
	}
	return g.publish(tmp, name)
}

func (g *gen) publish(tmp, name string) error {
	final := filepath.Join(g.dir, name)
	if err := publish(tmp, final); err != nil {
		return err
	}
	g.created = append(g.created, final)
	return nil
}

func (g *gen) appInfo() dump.AppInfo {
	info := dump.AppInfo{
		AppID:       base64.StdEncoding.EncodeToString(g.main.id[:]),
		AppSecret:   base64.StdEncoding.EncodeToString(g.main.secret),
		DecoyAppIDs: []string{},
	}
	for _, d := range g.decoys {
		info.DecoyAppIDs = append(info.DecoyAppIDs, base64.StdEncoding.EncodeToString(d.id[:]))
	}
	return info
}

func (g *gen) writeData() error {
	tmp := filepath.Join(g.tmp, dump.DataFile)
	f, err := createNew(tmp)
	if err != nil {
		return err
	}
	defer f.Close()
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "-- idvault exit dump: data (exit/dump/FORMAT.md), one COPY block per table.")
	for t := range tables {
		if err := g.tableBufs[t].Flush(); err != nil {
			return fmt.Errorf("dump: %w", err)
		}
		fmt.Fprintf(w, "\nCOPY %s (%s) FROM stdin;\n", tables[t].name, strings.Join(tables[t].columns, ", "))
		src := g.tableFiles[t]
		if _, err := src.Seek(0, io.SeekStart); err != nil {
			return fmt.Errorf("dump: %w", err)
		}
		if _, err := io.Copy(w, src); err != nil {
			return fmt.Errorf("dump: %w", err)
		}
		fmt.Fprintln(w, `\.`)
	}
	if err := w.Flush(); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	if err := f.Sync(); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("dump: %w", err)
	}
	return g.publish(tmp, dump.DataFile)
}
