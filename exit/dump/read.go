package dump

import (
	"bufio"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// IdentityLine is one line of identities.jsonl.
type IdentityLine struct {
	Email    string `json:"email"`
	Identity string `json:"identity"`
}

// App is app.json decoded.
type App struct {
	ID       []byte
	Secret   []byte
	DecoyIDs [][]byte
}

// ReadApp reads app.json of a dump directory.
func ReadApp(dir string) (App, error) {
	raw, err := os.ReadFile(filepath.Join(dir, AppFile))
	if err != nil {
		return App{}, fmt.Errorf("dump: %w", err)
	}
	var info AppInfo
	if err := json.Unmarshal(raw, &info); err != nil {
		return App{}, fmt.Errorf("dump: %s: %w", AppFile, err)
	}
	var a App
	if a.ID, err = base64.StdEncoding.DecodeString(info.AppID); err != nil {
		return App{}, fmt.Errorf("dump: %s: app_id: %w", AppFile, err)
	}
	if a.Secret, err = base64.StdEncoding.DecodeString(info.AppSecret); err != nil {
		return App{}, fmt.Errorf("dump: %s: app_secret is not base64", AppFile)
	}
	for _, d := range info.DecoyAppIDs {
		id, err := base64.StdEncoding.DecodeString(d)
		if err != nil {
			return App{}, fmt.Errorf("dump: %s: decoy_app_ids: %w", AppFile, err)
		}
		a.DecoyIDs = append(a.DecoyIDs, id)
	}
	return a, nil
}

// ReadIdentities reads identities.jsonl of a dump directory.
func ReadIdentities(dir string) ([]IdentityLine, error) {
	return readLines[IdentityLine](filepath.Join(dir, IdentitiesFile))
}

// ReadKeys reads resource_keys.jsonl of a dump directory (written with gen.Options.WriteKeys).
func ReadKeys(dir string) ([]KeyEntry, error) {
	return readLines[KeyEntry](filepath.Join(dir, KeysFile))
}

// ReadManifest reads manifest.jsonl of a dump directory.
func ReadManifest(dir string) ([]ManifestEntry, error) {
	return readLines[ManifestEntry](filepath.Join(dir, ManifestFile))
}

func readLines[T any](path string) ([]T, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, fmt.Errorf("dump: %w", err)
	}
	defer f.Close()
	var out []T
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 16<<20)
	for n := 1; sc.Scan(); n++ {
		var v T
		if err := json.Unmarshal(sc.Bytes(), &v); err != nil {
			return nil, fmt.Errorf("dump: %s line %d: %w", filepath.Base(path), n, err)
		}
		out = append(out, v)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("dump: %s: %w", filepath.Base(path), err)
	}
	return out, nil
}
